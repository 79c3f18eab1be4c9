//! What the app's own git may run of a repository an agent can write (SPEC 16): no hooks, no
//! fsmonitor, and none of the filter, diff or merge drivers the repository's own config names
//! (`.git/config`, `config.worktree` and what they include: files an agent can plant). The
//! user's global and system drivers (git-lfs, say) stay: an agent cannot write those. What is
//! left runs boxed to the repository (`sandbox::app_git_plan`).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::Cmd;

/// A config read is quick; a repository that stalls it is not waited on for long.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Always off: hooks live in the git dir an agent can write (or where `core.hooksPath` says),
/// and fsmonitor is a command named by config.
const ALWAYS: [&str; 2] = ["core.hooksPath=/dev/null", "core.fsmonitor=false"];

/// The `-c` options that switch off what `dir`'s repository config names to run. `hooks`: the
/// user asked for this command with its hooks (a commit), which run only where they are
/// confined to the repository or the user turned containment off.
pub(super) fn flags(dir: &Path, hooks: bool) -> Vec<OsString> {
    let mut out = Vec::new();
    let hooks = hooks && crate::sandbox::app_git_may_run_hooks();
    for kv in ALWAYS
        .iter()
        .filter(|kv| !(hooks && kv.starts_with("core.hooksPath")))
    {
        out.push("-c".into());
        out.push(kv.into());
    }
    for name in planted_drivers(dir) {
        out.push("-c".into());
        let off = if name.ends_with(".required") {
            format!("{name}=false")
        } else {
            format!("{name}=")
        };
        out.push(off.into());
    }
    out
}

/// The driver keys set in the repository's own config. Reading config runs nothing of the
/// repository (includes are only read), so this one git runs without the guard; like every git
/// the app runs in a repository, it runs boxed (SPEC 16). A repository it cannot read has none.
fn planted_drivers(dir: &Path) -> Vec<String> {
    let mut read = Cmd::git(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["config", "--show-scope", "--name-only", "--get-regexp"])
        .arg(r"^(filter|diff|merge)\.")
        .timeout(READ_TIMEOUT);
    read.guarded = false;
    let Ok(out) = read.output() else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((scope, name)) = line.split_once('\t') else {
            continue;
        };
        if !matches!(scope, "local" | "worktree") {
            continue;
        }
        let runs = [
            ".clean",
            ".smudge",
            ".process",
            ".textconv",
            ".command",
            ".driver",
        ]
        .iter()
        .any(|s| name.ends_with(s))
            || name == "diff.external";
        if runs {
            names.push(name.to_string());
            // A filter marked required fails the command once it is off: not required.
            if let Some(driver) = name.strip_prefix("filter.") {
                if let Some((d, _)) = driver.rsplit_once('.') {
                    names.push(format!("filter.{d}.required"));
                }
            }
        }
    }
    names.sort();
    names.dedup();
    names
}
