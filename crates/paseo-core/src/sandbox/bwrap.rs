//! bubblewrap: the boxed process sees the whole file system read-only, the hidden paths empty,
//! its own trees writable (a private temp folder among them, as `TMPDIR`), its own `/proc` (a new PID namespace, so it cannot
//! read another process's environment or memory), and no capabilities (the app may run as
//! root, whose capabilities would let it unmount what hides the secrets).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Boxed, Plan};

/// Finds bubblewrap and checks that it can build a box here (user namespaces allowed, /proc
/// mountable): running `true` in the same kind of box agents get.
pub(super) fn probe() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let bwrap = std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
        .ok_or_else(|| "bubblewrap (bwrap) is not installed".to_string())?;
    let mut child = Command::new(&bwrap)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--unshare-pid", "--cap-drop", "ALL", "--tmpfs", "/tmp"])
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("bubblewrap cannot be started: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(bwrap),
            Ok(Some(status)) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                let err = err.trim();
                return Err(format!(
                    "bubblewrap cannot make a sandbox here ({status}{}{err})",
                    if err.is_empty() { "" } else { ": " }
                ));
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("bubblewrap did not answer within 10 s".into());
            }
            Err(e) => return Err(format!("bubblewrap: {e}")),
        }
    }
}

/// One mount of the box, at `at`.
enum Mount<'a> {
    /// Empty (a hidden folder or file).
    Hide,
    /// The real tree, writable.
    Write,
    /// The real tree, read-only: one read inside a hidden one.
    Read,
    /// The real tree, read-only whatever else is there: a protected path.
    Protect,
    /// The agent's private temp folder, as `/tmp` (SPEC 16b: tools that write `/tmp` work,
    /// and nothing of the user's `/tmp`, X11 and ssh-agent sockets included, is in reach).
    Tmp(&'a Path),
}

impl Mount<'_> {
    /// At one path, what goes on top last: a hide, then what is read there (the repository's
    /// worktrees in the hidden data root), then the tree written there (the worktree being
    /// made), then what stays read-only whatever else does.
    fn rank(&self) -> u8 {
        match self {
            Mount::Hide | Mount::Tmp(_) => 0,
            Mount::Read => 1,
            Mount::Write => 2,
            Mount::Protect => 3,
        }
    }
}

/// The bwrap command line for `program args…` under `plan`.
///
/// Every mount is made in path order, parents before children, so whatever lies deeper stays
/// on top whichever kind it is: a hidden path inside a write tree (the data root inside a cwd
/// of `$HOME`, or inside `~/.cache`) is hidden again, and a write tree inside a hidden path (a
/// worktree in the data root) is there to write and to start in.
pub(super) fn command(
    plan: &Plan,
    bwrap: &Path,
    program: &Path,
    args: &[OsString],
    cwd: &Path,
) -> Boxed {
    let mut a: Vec<OsString> = Vec::with_capacity(48 + args.len());
    let mut push = |xs: &[&std::ffi::OsStr]| a.extend(xs.iter().map(|x| x.to_os_string()));
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    push(&["--proc".as_ref(), "/proc".as_ref()]);
    // Its own session (no terminal to push keystrokes into) comes from the spawn: `setsid`
    // before bwrap, which keeps the box one process group the app stops as a whole.
    push(&[
        "--unshare-pid".as_ref(),
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
    ]);
    if !plan.settings.network {
        push(&["--unshare-net".as_ref()]);
    }
    let hidden = plan.hidden();
    let mut mounts: Vec<(&Path, Mount)> = Vec::new();
    for h in &hidden {
        mounts.push((h, Mount::Hide));
    }
    match &plan.tmp {
        Some(t) => mounts.push((Path::new("/tmp"), Mount::Tmp(t))),
        None => mounts.push((Path::new("/tmp"), Mount::Hide)),
    }
    for w in plan.writes.iter().filter(|w| w.exists()) {
        mounts.push((w, Mount::Write));
    }
    for p in plan.reads.iter().filter(|p| p.exists()) {
        mounts.push((p, Mount::Read));
    }
    for p in plan.protected.iter().filter(|p| p.exists()) {
        mounts.push((p, Mount::Protect));
    }
    // Parents first; at one path, the rank's order (stable, so the plan's order within it).
    mounts.sort_by_key(|(p, m)| (p.components().count(), m.rank()));
    for (p, m) in &mounts {
        match m {
            Mount::Hide => hide(&mut push, p),
            Mount::Tmp(t) => push(&["--bind".as_ref(), t.as_os_str(), p.as_os_str()]),
            Mount::Write => push(&["--bind".as_ref(), p.as_os_str(), p.as_os_str()]),
            Mount::Read | Mount::Protect => {
                push(&["--ro-bind".as_ref(), p.as_os_str(), p.as_os_str()])
            }
        }
    }
    // Last, once every mount point inside them exists: an empty folder that takes writes would
    // let an agent plant a file where the app looks for one.
    for h in hidden.iter().filter(|h| h.is_dir()) {
        push(&["--remount-ro".as_ref(), h.as_os_str()]);
    }
    push(&["--chdir".as_ref(), cwd.as_os_str()]);
    push(&["--".as_ref(), program.as_os_str()]);
    a.extend(args.iter().cloned());
    Boxed {
        program: bwrap.to_path_buf(),
        args: a,
        env: plan.tmp_env(),
        landlock: super::landlock::Rules::scope_only(),
    }
}

/// Makes `path` read as empty: a folder becomes an empty tmpfs, a file an empty file.
fn hide(push: &mut impl FnMut(&[&std::ffi::OsStr]), path: &Path) {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => push(&["--tmpfs".as_ref(), path.as_os_str()]),
        Ok(_) => push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), path.as_os_str()]),
        // Nothing to hide; and it cannot be made, the rest being read-only.
        Err(_) => {}
    }
}
