//! What the app's own git may run of a repository an agent can write (SPEC 16): no hooks, no
//! fsmonitor, and none of the filter, diff or merge drivers the repository's own config names
//! (`.git/config`, `config.worktree` and what they include: files an agent can plant). The
//! user's global and system drivers (git-lfs, say) stay: an agent cannot write those. What is
//! left runs boxed to the repository (`sandbox::app_git_plan`).

use std::path::Path;
use std::time::Duration;

use super::Cmd;

/// A config read is quick; a repository that stalls it is not waited on for long.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Always off: hooks live in the git dir an agent can write (or where `core.hooksPath` says),
/// and fsmonitor is a command named by config.
const ALWAYS: [(&str, &str); 2] = [("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false")];

/// The settings that switch off what `dir`'s repository config names to run, as
/// `(key, value)`: given to git through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`VALUE_n`, which
/// take the key whole (a `-c name=value` splits at the first `=`, so a driver named `x=y`
/// escaped it). `hooks`: the user asked for this command with its hooks (a commit), which run
/// only where they are confined to the repository or the user turned containment off.
pub(super) fn overrides(dir: &Path, hooks: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let hooks = hooks && crate::sandbox::app_git_may_run_hooks();
    for (k, v) in ALWAYS
        .iter()
        .filter(|(k, _)| !(hooks && *k == "core.hooksPath"))
    {
        out.push((k.to_string(), v.to_string()));
    }
    for name in planted_drivers(dir) {
        let off = if name.ends_with(".required") {
            "false"
        } else {
            ""
        };
        out.push((name, off.to_string()));
    }
    out
}

/// The environment that gives git `overrides` (see [`overrides`]).
pub(super) fn env(overrides: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = vec![("GIT_CONFIG_COUNT".to_string(), overrides.len().to_string())];
    for (i, (k, v)) in overrides.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k.clone()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v.clone()));
    }
    env
}

/// What the repository's own config files are now (path, inode, size, modification time), as
/// the key of the guard's read of them. `None` when it cannot be told without git: not a
/// checkout whose git dirs are known, or a config that includes other files (an included file
/// can change while these do not).
fn config_key(dir: &Path) -> Option<Vec<(std::path::PathBuf, u64, u64, i128)>> {
    use std::os::unix::fs::MetadataExt;
    let dirs = crate::sandbox::git_dirs(dir);
    if dirs.is_empty() {
        return None;
    }
    let mut key = Vec::new();
    for d in &dirs {
        for name in ["config", "config.worktree"] {
            let f = d.join(name);
            match std::fs::metadata(&f) {
                Ok(m) => {
                    let text = std::fs::read(&f).ok()?;
                    if text.windows(7).any(|w| w.eq_ignore_ascii_case(b"include")) {
                        return None;
                    }
                    let t = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
                    key.push((f, m.ino(), m.size(), t));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => key.push((f, 0, 0, 0)),
                Err(_) => return None,
            }
        }
    }
    Some(key)
}

type Key = Vec<(std::path::PathBuf, u64, u64, i128)>;

/// The guard's last read of each repository, by its config files' key: a repository whose
/// config did not change since (agents cannot write it in their box, SPEC 16b) needs no new
/// `git config` run before each command.
static READS: std::sync::Mutex<Vec<(Key, Vec<String>)>> = std::sync::Mutex::new(Vec::new());
/// How many repositories' reads are kept (the oldest goes first).
const KEPT_READS: usize = 64;

/// The driver keys set in the repository's own config, read once per version of its config
/// files ([`planted_drivers_now`] when they changed or cannot be told apart).
fn planted_drivers(dir: &Path) -> Vec<String> {
    let Some(key) = config_key(dir) else {
        return planted_drivers_now(dir);
    };
    {
        let reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, names)) = reads.iter().find(|(k, _)| *k == key) {
            return names.clone();
        }
    }
    let names = planted_drivers_now(dir);
    // A config changed while git read it is read again next time: the key is taken again.
    if config_key(dir).as_ref() == Some(&key) {
        let mut reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        reads.retain(|(k, _)| k.first().map(|f| &f.0) != key.first().map(|f| &f.0));
        if reads.len() >= KEPT_READS {
            reads.remove(0);
        }
        reads.push((key, names.clone()));
    }
    names
}

/// The driver keys set in the repository's own config. Reading config runs nothing of the
/// repository (includes are only read, no hook, fsmonitor or driver runs), so this one git runs
/// without the guard and without a box of its own: the command it guards is boxed. A
/// repository it cannot read has none.
fn planted_drivers_now(dir: &Path) -> Vec<String> {
    let mut read = Cmd::git(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["config", "--show-scope", "--name-only", "--get-regexp"])
        .arg(r"^(filter|diff|merge)\.")
        .timeout(READ_TIMEOUT)
        .unboxed();
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
