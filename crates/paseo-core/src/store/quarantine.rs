//! Setting aside what cannot be read (SPEC 1 and 15): into `$PASEO_HOME/quarantine/`, named
//! after where it was and when, never overwriting an earlier one, never deleted.
//!
//! Agent records and inboxes are moved (the app forgets them). Registries and the config are
//! copied when they can be read (the good entries stay in use and the original is rewritten from
//! them), and moved when they cannot even be read, so the app's next write cannot replace bytes
//! nobody has seen.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::atomic;
use super::paths::Layout;
use crate::model::Timestamp;

/// A file set aside because it could not be read or parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Quarantined {
    pub from: String,
    pub to: String,
    pub reason: String,
}

impl Quarantined {
    /// The line the UI shows and the log keeps.
    pub fn notice(&self) -> String {
        format!(
            "{} could not be read ({}); it was set aside as {}",
            self.from, self.reason, self.to
        )
    }
}

/// A fresh name in `quarantine/` for `path`: `<millis>-<path under the root, / as _>`.
fn target_for(layout: &Layout, path: &Path) -> io::Result<PathBuf> {
    let qdir = layout.quarantine_dir();
    atomic::ensure_dir(&qdir)?;
    let rel = path.strip_prefix(&layout.home).unwrap_or(path);
    let flat: String = rel
        .to_string_lossy()
        .chars()
        .map(|c| if c == '/' || c == '\\' { '_' } else { c })
        .collect();
    let flat = flat.trim_start_matches('_');
    let stamp = Timestamp::now().millis();
    let mut target = qdir.join(format!("{stamp}-{flat}"));
    let mut n = 1;
    while target.symlink_metadata().is_ok() {
        target = qdir.join(format!("{stamp}-{n}-{flat}"));
        n += 1;
    }
    Ok(target)
}

fn report(path: &Path, target: &Path, reason: &str) -> Quarantined {
    tracing::warn!(from = %path.display(), to = %target.display(), reason, "quarantined");
    Quarantined {
        from: path.display().to_string(),
        to: target.display().to_string(),
        reason: reason.to_string(),
    }
}

/// Moves `path` into `quarantine/`.
pub fn quarantine(layout: &Layout, path: &Path, reason: &str) -> io::Result<Quarantined> {
    let target = target_for(layout, path)?;
    fs::rename(path, &target).or_else(|_| {
        // Another file system: copy, then remove.
        fs::copy(path, &target)?;
        fs::remove_file(path)
    })?;
    atomic::sync_dir(&layout.quarantine_dir())?;
    if let Some(p) = path.parent() {
        let _ = atomic::sync_dir(p);
    }
    Ok(report(path, &target, reason))
}

/// Keeps a durable copy of `path` in `quarantine/`; the original stays where it is.
pub fn quarantine_copy(layout: &Layout, path: &Path, reason: &str) -> io::Result<Quarantined> {
    let target = target_for(layout, path)?;
    let bytes = fs::read(path)?;
    atomic::write_atomic(&target, &bytes)?;
    Ok(report(path, &target, reason))
}

/// A registry or config file that could not be used: copied aside when its bytes can be read,
/// moved aside when they cannot. Returns what was done, or the message for a file that could
/// not be set aside at all.
pub fn set_aside(
    layout: &Layout,
    path: &Path,
    reason: &str,
    readable: bool,
) -> Result<Quarantined, String> {
    let r = if readable {
        quarantine_copy(layout, path, reason)
    } else {
        quarantine(layout, path, reason)
    };
    r.map_err(|e| {
        let m = format!(
            "{} could not be read ({reason}) and could not be set aside in {}: {e}",
            path.display(),
            layout.quarantine_dir().display()
        );
        tracing::error!("{m}");
        m
    })
}
