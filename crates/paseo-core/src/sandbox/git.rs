//! Where git writes for a tree, and the box the app's own git runs in (SPEC 16: the app's git
//! in a tree an agent can write runs with no more reach than that agent).

use std::path::{Path, PathBuf};

use super::{canonical, Engine, Plan, APP_GIT};

/// The git directories a work tree's commits write: its `.git` (or, for a linked worktree, its
/// own git dir and the repository's common dir). Found the way git finds them, walking up from
/// `dir` to the first `.git`; empty when `dir` is not in a checkout.
///
/// What a box may write must not be decided by a file the agent in it can write (SPEC 16b):
/// a `.git` file or a `commondir` could name the data root, the home or another repository.
/// So a `.git` file counts only when git's own record agrees both ways: it names a folder
/// `<common>/worktrees/<id>` whose `gitdir` file names this `.git` file back (a record an
/// agent can plant only inside a repository it already writes), and the common dir is that
/// folder's grandparent, never what `commondir` says. A `.git` that is a symlink counts for
/// nothing. Anything else: no git dir, so nothing outside the work tree is written.
pub fn git_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut at = Some(canonical(dir));
    while let Some(d) = at {
        let dot = d.join(".git");
        match std::fs::symlink_metadata(&dot) {
            Ok(m) if m.is_dir() => return vec![dot],
            Ok(m) if m.is_file() => return linked(&dot),
            Ok(_) => return Vec::new(),
            Err(_) => {}
        }
        at = d.parent().map(Path::to_path_buf);
    }
    Vec::new()
}

/// A `.git` file (`gitdir: <path>`) of a linked worktree, checked against git's record of it:
/// its git dir and the repository's common dir, or nothing.
fn linked(dot: &Path) -> Vec<PathBuf> {
    let Some(top) = dot.parent() else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(dot) else {
        return Vec::new();
    };
    let Some(gitdir) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return Vec::new();
    };
    let Ok(admin) = std::fs::canonicalize(top.join(gitdir.trim())) else {
        return Vec::new();
    };
    let Some(common) = admin
        .parent()
        .filter(|w| w.file_name().is_some_and(|n| n == "worktrees"))
        .and_then(Path::parent)
        .map(Path::to_path_buf)
    else {
        return Vec::new();
    };
    // git's own record of where this worktree is: it must name this very `.git` file.
    let back = std::fs::read_to_string(admin.join("gitdir")).ok();
    let names_us = back
        .as_deref()
        .map(|b| canonical(Path::new(b.trim())))
        .is_some_and(|b| b == canonical(dot));
    if !admin.is_dir() || !common.join("objects").is_dir() || !names_us {
        return Vec::new();
    }
    vec![admin, common]
}

/// The repository's main checkout for the git directories of a work tree ([`git_dirs`]): the
/// folder holding the common `.git`. `None` for a bare repository or outside a checkout.
pub fn common_root(dirs: &[PathBuf]) -> Option<PathBuf> {
    let common = dirs.last()?;
    (common.file_name()? == ".git").then(|| common.parent().map(Path::to_path_buf))?
}

/// The data roots app-run git hides (those of every runtime of this process that still exist).
pub fn app_git_data_roots() -> Vec<PathBuf> {
    APP_GIT
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|g| {
            g.data_roots
                .iter()
                .filter(|r| r.exists())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The box for a git command the app runs in `dir` (`-C dir`): it writes the work tree `dir`
/// is in, its git directories and `extra` (a private index, a new worktree's folder), reads
/// `sees` even inside a hidden path (the repository's other worktrees in the data root: git
/// forgets a worktree whose folder it cannot see), and reads everything else but the hidden
/// paths. `None` when app git is not boxed (containment off or unavailable).
pub fn app_git_plan(dir: &Path, extra: &[PathBuf], sees: &[PathBuf]) -> Option<Plan> {
    let g = APP_GIT.read().unwrap_or_else(|e| e.into_inner()).clone()?;
    // Landlock where the kernel has it, whatever boxes the agents: the app's git runs many short
    // commands, and a Landlock box costs a few system calls where bubblewrap makes namespaces
    // (≈ 5 ms a command). What it holds back is the same here: its writes, the hidden paths,
    // the user's session. What Landlock cannot keep read-only inside a git dir does not matter
    // to the app's own git, which plants nothing.
    let engine = match super::landlock_abi() {
        Some(abi) => Engine::Landlock(abi),
        None => g.engine,
    };
    let mut plan = Plan::new(engine, g.settings);
    // Data roots of runtimes that ended (tests make many) are gone: nothing to hide there.
    plan.extra_hidden = g.data_roots.into_iter().filter(|r| r.exists()).collect();
    let dir = canonical(dir);
    let dirs = git_dirs(&dir);
    // The work tree is the folder holding `.git`; for a bare repository or a folder outside
    // any checkout, the folder itself.
    let top = dir
        .ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.clone());
    plan.write(&top);
    for d in &dirs {
        plan.write(d);
    }
    for e in extra {
        plan.write(e);
    }
    for s in sees {
        plan.read(s);
    }
    plan.cwd = Some(dir);
    Some(plan)
}
