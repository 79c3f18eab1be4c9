//! Where git writes for a tree, and the box the app's own git runs in (SPEC 16: the app's git
//! in a tree an agent can write runs with no more reach than that agent).

use std::path::{Path, PathBuf};

use super::{canonical, Plan, APP_GIT};

/// The git directories a work tree's commits write: its `.git` (or, for a linked worktree, its
/// own git dir and the repository's common dir). Found the way git finds them, walking up from
/// `dir` to the first `.git`; empty when `dir` is not in a checkout.
pub fn git_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut at = Some(canonical(dir));
    while let Some(d) = at {
        let dot = d.join(".git");
        if dot.is_dir() {
            return vec![dot];
        }
        if dot.is_file() {
            return linked(&d, &dot);
        }
        at = d.parent().map(Path::to_path_buf);
    }
    Vec::new()
}

/// A `.git` file (`gitdir: <path>`): the worktree's git dir and its `commondir`.
fn linked(top: &Path, dot: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dot) else {
        return Vec::new();
    };
    let Some(gitdir) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return Vec::new();
    };
    let gitdir = top.join(gitdir.trim());
    let mut dirs = vec![canonical(&gitdir)];
    if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
        let common = canonical(&gitdir.join(common.trim()));
        if !dirs.contains(&common) {
            dirs.push(common);
        }
    }
    dirs
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
    let mut plan = Plan::new(g.engine, g.settings);
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
