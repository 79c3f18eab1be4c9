//! Where one agent's cwd stands against another's (SPEC 14, 16): the reach part of power.
//! A contained agent may write only inside its cwd tree and its repository's git directory, so
//! a new agent whose cwd is outside that tree (a parent directory, `$HOME`, `/`, the data root,
//! another repository's worktree) would reach further than the agent that asked for it. Paths
//! are compared canonical, so `..` and symlinks do not escape; a worktree the app made of the
//! caller's own repository (the same git common dir, in the data root's worktrees folder) is
//! the one exception. The data root and the user's
//! secrets (`sandbox.hide`) are in no agent's reach, even inside its cwd tree: a caller working
//! in `$HOME` cannot start an agent in `~/.ssh` or in the data root.

use std::path::{Path, PathBuf};

use super::gitcli::Cmd;
use crate::model::Reach;

/// Where `cwd` stands against `caller_cwd`, `hidden` being the directories no agent reaches
/// through its tree ([`crate::sandbox::hidden_roots`]) unless it works inside one itself (an agent in a
/// worktree under the data root). Anything that cannot be told (a path that no longer exists,
/// git failing) is [`Reach::Outside`]: the turn is then held for the user, never let through.
/// Blocking (git).
pub fn relate(caller_cwd: &Path, cwd: &Path, hidden: &[PathBuf]) -> Reach {
    let (Ok(mine), Ok(theirs)) = (caller_cwd.canonicalize(), cwd.canonicalize()) else {
        return Reach::Outside;
    };
    let my_repo = common_dir(&mine);
    let their_repo = common_dir(&theirs);
    if theirs.starts_with(&mine) {
        if hidden
            .iter()
            .any(|h| theirs.starts_with(h) && !mine.starts_with(h))
        {
            return Reach::Outside;
        }
        // Its git directory is in its reach too: it must be the caller's, or lie inside the
        // caller's tree (a repository the caller made there). A `.git` file the caller planted
        // could point anywhere else.
        return match (&their_repo, &my_repo) {
            (None, _) => Reach::Inside,
            (Some(t), Some(m)) if t == m => Reach::Inside,
            (Some(t), _) if t.starts_with(&mine) => Reach::Inside,
            _ => Reach::Outside,
        };
    }
    // Another checkout of the caller's own repository is in its reach only when it is a
    // worktree the app made (in the data root's worktrees folder, where agents fan out): the
    // user's own checkout, or one of theirs elsewhere, is not (SPEC 16b).
    let app_made = hidden
        .first()
        .is_some_and(|data_root| theirs.starts_with(data_root.join("worktrees")));
    match (their_repo, my_repo) {
        (Some(t), Some(m)) if t == m && app_made && !same_checkout(&mine, &theirs) => {
            Reach::OwnRepository
        }
        _ => Reach::Outside,
    }
}

/// Whether an agent working in `caller_cwd` may make a worktree of the repository containing
/// `repo` (SPEC 16b "reach"; `create_worktree`, a worktree workspace of `create_agent`): only
/// of a repository inside its reach, which is its own repository or one inside its tree. A new
/// worktree writes that repository's git dir (a branch, its records), and git's global drivers
/// run in its checkout. Blocking (git).
pub fn may_make_worktree(caller_cwd: &Path, repo: &Path, hidden: &[PathBuf]) -> bool {
    if matches!(
        relate(caller_cwd, repo, hidden),
        Reach::Inside | Reach::OwnRepository
    ) {
        return true;
    }
    let (Ok(mine), Ok(theirs)) = (caller_cwd.canonicalize(), repo.canonicalize()) else {
        return false;
    };
    matches!((common_dir(&mine), common_dir(&theirs)), (Some(a), Some(b)) if a == b)
}

/// The canonical git common dir of the repository containing `dir`, if any. Only `rev-parse`
/// runs (no hooks, filters or fsmonitor), and nothing of the environment names a repository.
fn common_dir(dir: &Path) -> Option<PathBuf> {
    let out = Cmd::git(dir)
        .config("core.fsmonitor=false")
        .timeout(std::time::Duration::from_secs(10))
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .query()
        .ok()??;
    PathBuf::from(out.trim()).canonicalize().ok()
}

/// Whether two directories are in the same working tree: a sibling directory of the caller's
/// own checkout is not a worktree of it, it is outside the caller's cwd tree.
fn same_checkout(a: &Path, b: &Path) -> bool {
    let top = |d: &Path| {
        super::gitcli::toplevel(d)
            .ok()
            .flatten()
            .and_then(|t| t.canonicalize().ok())
    };
    match (top(a), top(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn repo(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q", "-b", "main"]);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "first"]);
    }

    #[test]
    fn where_a_cwd_stands() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let home = root.join("home");
        let proj = home.join("proj");
        repo(&proj);
        std::fs::create_dir_all(proj.join("src/deep")).unwrap();
        let wt = root.join("data/worktrees/proj-feature");
        git(
            &proj,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "feature",
                wt.to_str().unwrap(),
            ],
        );
        let other = home.join("dotfiles");
        repo(&other);
        let other_wt = root.join("data/worktrees/dotfiles-x");
        git(
            &other,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "x",
                other_wt.to_str().unwrap(),
            ],
        );
        let plain = root.join("plain");
        std::fs::create_dir_all(plain.join("sub")).unwrap();
        // Escapes through the path: `..`, and a symlink inside the caller's tree.
        std::os::unix::fs::symlink(&home, proj.join("src/to-home")).unwrap();
        let dotdot = proj.join("src/../..");
        // A repository the caller made inside its own tree is its own.
        let nested = proj.join("src/nested");
        repo(&nested);
        // A `.git` file planted in the caller's tree, pointing at another repository's
        // worktree: its git directory would be outside the caller's reach.
        let planted = proj.join("src/planted");
        std::fs::create_dir_all(&planted).unwrap();
        let gitdir = other.join(".git/worktrees/dotfiles-x");
        std::fs::write(
            planted.join(".git"),
            format!("gitdir: {}\n", gitdir.display()),
        )
        .unwrap();

        use Reach::*;
        let cases: &[(&Path, &Path, Reach)] = &[
            (&proj, &proj, Inside),
            (&proj, &proj.join("src/deep"), Inside),
            (&proj, &nested, Inside),
            (&proj, &home, Outside),
            (&proj, Path::new("/"), Outside),
            (&proj, &root, Outside),
            (&proj, &dotdot, Outside),
            (&proj, &proj.join("src/to-home"), Outside),
            (&proj, &planted, Outside),
            (&proj, &wt, OwnRepository),
            // The user's own checkout is not a worktree the app made: a worktree agent does not
            // reach it (SPEC 16b).
            (&wt, &proj, Outside),
            (&wt, &wt.join("."), Inside),
            (&proj, &other_wt, Outside),
            (&proj, &other, Outside),
            (&proj.join("src"), &proj, Outside),
            (&proj.join("src/deep"), &proj.join("src"), Outside),
            (&plain, &plain.join("sub"), Inside),
            (&plain, &proj, Outside),
            (&plain.join("sub"), &plain, Outside),
            (&proj, &root.join("missing"), Outside),
        ];
        // Only the data root, which the app's worktrees are in.
        let data_root = [root.join("data")];
        for (caller, cwd, want) in cases {
            assert_eq!(
                relate(caller, cwd, &data_root),
                *want,
                "{caller:?} → {cwd:?}"
            );
        }

        // The data root and the user's secrets inside the caller's tree are still outside its
        // reach, unless the caller works inside one (an agent in a worktree of the data root).
        let data = root.join("data");
        let ssh = home.join(".ssh");
        std::fs::create_dir_all(ssh.join("keys")).unwrap();
        let hidden = [data.clone(), ssh.clone()];
        let cases: &[(&Path, &Path, Reach)] = &[
            (&home, &proj, Inside),
            (&home, &ssh, Outside),
            (&home, &ssh.join("keys"), Outside),
            (&root, &data, Outside),
            (&root, &wt, Outside),
            (&wt, &wt, Inside),
            (&proj, &wt, OwnRepository),
            (&ssh, &ssh.join("keys"), Inside),
        ];
        for (caller, cwd, want) in cases {
            assert_eq!(relate(caller, cwd, &hidden), *want, "{caller:?} → {cwd:?}");
        }
    }
}

#[cfg(test)]
mod hidden_tests {
    use crate::sandbox::hidden_roots;
    use std::path::{Path, PathBuf};

    #[test]
    fn the_data_root_and_the_hide_list_are_hidden() {
        let roots = hidden_roots(Path::new("/nowhere/paseo"), &["/etc/secret".into()]);
        assert_eq!(roots[0], PathBuf::from("/nowhere/paseo"));
        assert!(roots.contains(&PathBuf::from("/etc/secret")));
        if let Some(home) = std::env::var_os("HOME") {
            let roots = hidden_roots(Path::new("/x"), &["~/.ssh".into()]);
            let want = PathBuf::from(home).join(".ssh");
            assert_eq!(roots[1], want.canonicalize().unwrap_or(want));
        }
    }
}
