//! Atomic, durable file replacement: a crash at any instant leaves the old or the new content,
//! never a torn file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Prefix of temp files; a load removes leftovers a crash left behind.
pub const TEMP_PREFIX: &str = ".tmp-";

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_path(path: &Path) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{TEMP_PREFIX}{}-{n}-{name}", std::process::id()))
}

/// A folder private to the user (0700, whatever the umask): everything the app keeps is under
/// the data root, which no other local user may read (SPEC 16).
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .mode(super::private::DIR_MODE)
        .create(dir)
}

/// Opens for [`replace_with`]: a new file, private to the user (0600, whatever the umask).
fn private_new_file() -> OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = OpenOptions::new();
    opts.write(true)
        .create_new(true)
        .mode(super::private::FILE_MODE);
    opts
}

/// Makes sure `dir` exists (folders it creates are private), and that a newly created
/// directory's entry is durable in its parent.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut cur = dir;
    while !cur.exists() {
        missing.push(cur.to_path_buf());
        match cur.parent() {
            Some(p) => cur = p,
            None => break,
        }
    }
    for d in missing.iter().rev() {
        match create_private_dir(d) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        if let Some(p) = d.parent() {
            sync_dir(p)?;
        }
    }
    Ok(())
}

/// fsync a directory, so renames and creations inside it are durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Writes `bytes` to `path` atomically and durably: temp file in the same folder, fsync,
/// rename over the target, fsync the folder. The file is private (0600).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(path, bytes, &private_new_file())
}

/// Removes `path` durably (a missing file is fine).
pub fn remove_durable(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Writes a small secret file with mode 0600 (created that way, never world-readable).
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(path, bytes, &private_new_file())
}

/// The atomic replacement itself, the temp file opened with `opts` (which must create it new).
fn replace_with(path: &Path, bytes: &[u8], opts: &OpenOptions) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    ensure_dir(dir)?;
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = opts.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/c.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
        remove_durable(&p).unwrap();
        remove_durable(&p).unwrap();
        assert!(!p.exists());
    }

    #[cfg(unix)]
    #[test]
    fn private_files_are_0600() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("token");
        write_private(&p, b"secret").unwrap();
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    /// SPEC 16: records, inboxes and registries (everything written atomically) are 0600 and
    /// the folders made for them 0700, not what the umask (usually 022) would give.
    #[test]
    fn records_and_their_folders_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("agents/x/record.json");
        write_atomic(&p, b"{}").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), 0o600);
        assert_eq!(mode(&d.path().join("agents")), 0o700);
        assert_eq!(mode(&d.path().join("agents/x")), 0o700);
    }
}
