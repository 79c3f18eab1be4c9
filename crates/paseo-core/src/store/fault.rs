//! Fault injection for tests only (compiled with `cfg(test)`): a data root whose disk stops
//! after a given number of completed writes, so a test can stop the app between any two of its
//! writes (the writer's atomic writes and removals, and timeline appends) and restart it on
//! what landed. Other data roots (tests running alongside) are untouched.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

struct Root {
    home: PathBuf,
    /// Writes still allowed; `None` counts without limit.
    left: Option<u64>,
    /// The files written, in order.
    log: Vec<PathBuf>,
}

static ROOTS: Mutex<Vec<Root>> = Mutex::new(Vec::new());

fn roots() -> std::sync::MutexGuard<'static, Vec<Root>> {
    ROOTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// From now on at most `writes` more writes land under `home` (`None`: all of them, counted).
pub fn stop_after(home: &Path, writes: Option<u64>) {
    let mut r = roots();
    r.retain(|x| x.home != home);
    r.push(Root {
        home: home.to_path_buf(),
        left: writes,
        log: Vec::new(),
    });
}

/// Writes under `home` land again; returns the files written since [`stop_after`].
pub fn clear(home: &Path) -> Vec<PathBuf> {
    let mut r = roots();
    let pos = r.iter().position(|x| x.home == home);
    pos.map(|i| r.remove(i).log).unwrap_or_default()
}

/// Called before each write of `path`: an error once the disk of its data root stopped.
pub fn allow(path: &Path) -> io::Result<()> {
    let mut r = roots();
    let Some(root) = r.iter_mut().find(|x| path.starts_with(&x.home)) else {
        return Ok(());
    };
    match &mut root.left {
        Some(0) => return Err(io::Error::other("the disk stopped (fault injection)")),
        Some(n) => *n -= 1,
        None => {}
    }
    root.log.push(path.to_path_buf());
    Ok(())
}

/// How many writes landed under `home` since [`stop_after`].
pub fn written(home: &Path) -> usize {
    roots()
        .iter()
        .find(|x| x.home == home)
        .map_or(0, |x| x.log.len())
}

/// The disk of `home` stops now.
pub fn freeze(home: &Path) {
    if let Some(x) = roots().iter_mut().find(|x| x.home == home) {
        x.left = Some(0);
    }
}
