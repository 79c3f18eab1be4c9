//! The exclusive lock on the data root: while one process holds `$PASEO_HOME/lock`, no other
//! Paseo process (window or headless) may write the root. The holder's pid is kept in the file so
//! a refused process can say who holds it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum LockError {
    #[error(
        "the data root {root} is in use by another Paseo process ({holder}); only one process may \
         own a data root at a time. Quit that process, or set PASEO_HOME to another folder."
    )]
    Held { root: PathBuf, holder: String },
    #[error("cannot open the lock file {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot record this process in the lock file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Holds the lock until dropped (or until the process ends, whichever comes first: the kernel
/// releases a `flock` when its last file descriptor closes, so a crash never leaves a stale lock).
#[derive(Debug)]
pub struct DataRootLock {
    file: File,
    path: PathBuf,
}

impl DataRootLock {
    /// Takes the lock on `root` without waiting; fails with [`LockError::Held`] naming the
    /// holder's pid when another process (or another handle in this process) has it.
    pub fn acquire(root: &Path) -> Result<Self, LockError> {
        let path = root.join("lock");
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(paseo_core::store::private::FILE_MODE)
            .open(&path)
            .map_err(|source| LockError::Open {
                path: path.clone(),
                source,
            })?;
        if let Err(source) = try_flock(&file) {
            if source.kind() == std::io::ErrorKind::WouldBlock {
                return Err(LockError::Held {
                    root: root.to_path_buf(),
                    holder: describe_holder(&mut file),
                });
            }
            return Err(LockError::Lock { path, source });
        }
        let record = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            writeln!(file, "{}", std::process::id())?;
            file.sync_all()
        };
        record(&mut file).map_err(|source| LockError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(Self { file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Releases the lock now (dropping does the same); clears the pid first so that a reader
    /// never sees a released lock that names a live process.
    pub fn release(self) {
        drop(self);
    }
}

impl Drop for DataRootLock {
    fn drop(&mut self) {
        // Best effort: the flock itself goes away with the descriptor regardless.
        let _ = self.file.set_len(0);
    }
}

fn try_flock(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this File owns for the duration of the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn describe_holder(file: &mut File) -> String {
    let mut text = String::new();
    let pid = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text))
        .ok()
        .and_then(|_| text.trim().parse::<u32>().ok());
    match pid {
        Some(pid) => format!("pid {pid}"),
        // The holder may be between taking the lock and writing its pid.
        None => "pid unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_acquire_is_refused_naming_root_and_pid_then_succeeds_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataRootLock::acquire(dir.path()).unwrap();
        let content = std::fs::read_to_string(first.path()).unwrap();
        assert_eq!(content.trim(), std::process::id().to_string());

        let err = DataRootLock::acquire(dir.path()).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, LockError::Held { .. }));
        assert!(
            message.contains(&dir.path().display().to_string()),
            "{message}"
        );
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );

        first.release();
        let again = DataRootLock::acquire(dir.path()).unwrap();
        drop(again);
    }

    #[test]
    fn missing_root_is_a_clear_open_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = DataRootLock::acquire(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(err, LockError::Open { .. }));
        assert!(err.to_string().contains("missing/lock"), "{err}");
    }
}
