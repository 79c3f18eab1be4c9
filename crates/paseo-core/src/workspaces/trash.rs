//! The app's trash in the data root, `$PASEO_HOME/trash/` (SPEC 15): what is left of a removed
//! worktree after its snapshot commit (ignored files such as `.env`, build output, local
//! databases) is moved here instead of being deleted, kept for `storage.trashDays` days and put
//! back when the worktree is restored.
//!
//! One entry per removal: `trash/<UTC time>-<worktree folder>/` holding `paseo-trash.json` (the
//! manifest: where the worktree was, its repository and branch, when it was trashed) and
//! `tree/`, the worktree's directory moved there whole by one rename (same file system, so
//! nothing is copied and nothing half-moved). The manifest is what finds the entry again: the
//! registry does not change shape.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::WorkspaceError;
use crate::model::Timestamp;
use crate::store::Layout;

/// The manifest's file name inside an entry.
pub const MANIFEST: &str = "paseo-trash.json";
/// The moved directory's name inside an entry.
pub const TREE: &str = "tree";

/// What an entry holds and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The worktree's path when it was removed (where a restore puts it back).
    pub worktree: String,
    /// The repository it was a worktree of.
    pub repo: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The snapshot commit made on the branch just before, if there was anything to commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    pub trashed_at: Timestamp,
    /// Set once a restore has put back what it could; what is left (the tracked files the
    /// branch brought back anyway, anything the branch now has at the same path) stays until
    /// the entry is purged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_at: Option<Timestamp>,
}

/// One entry of the trash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl Entry {
    pub fn tree(&self) -> PathBuf {
        self.dir.join(TREE)
    }
}

fn io(what: &str, path: &Path, e: std::io::Error) -> WorkspaceError {
    WorkspaceError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// A folder name made of the readable characters of `name`.
fn readable(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(80)
        .collect();
    let s = s.trim_matches(|c| c == '-' || c == '.');
    if s.is_empty() {
        "worktree".into()
    } else {
        s.into()
    }
}

/// Moves the directory `dir` (a worktree already snapshotted) into a new trash entry and
/// returns the entry. The manifest is written first, so an entry never holds a tree nobody can
/// trace back; if the move fails, the entry goes again and `dir` is left where it was.
pub fn put(layout: &Layout, dir: &Path, manifest: &Manifest) -> Result<Entry, WorkspaceError> {
    let root = layout.trash_dir();
    std::fs::create_dir_all(&root).map_err(|e| io("create", &root, e))?;
    let name = readable(
        &dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let stamp = chrono::DateTime::from_timestamp_millis(manifest.trashed_at.millis())
        .unwrap_or_default()
        .format("%Y%m%dT%H%M%SZ");
    let mut entry = root.join(format!("{stamp}-{name}"));
    let mut n = 2;
    // `create_dir`, not `create_dir_all`: an existing entry is never shared.
    loop {
        match std::fs::create_dir(&entry) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => {
                entry = root.join(format!("{stamp}-{name}-{n}"));
                n += 1;
            }
            Err(e) => return Err(io("create", &entry, e)),
        }
    }
    let undo = |e: WorkspaceError| {
        if let Err(r) = std::fs::remove_dir_all(&entry) {
            tracing::warn!(entry = %entry.display(), error = %r, "empty trash entry not removed");
        }
        e
    };
    let text = serde_json::to_vec_pretty(manifest).map_err(|e| {
        undo(WorkspaceError::Io(format!(
            "cannot encode the manifest: {e}"
        )))
    })?;
    let path = entry.join(MANIFEST);
    crate::store::atomic::write_atomic(&path, &text).map_err(|e| undo(io("write", &path, e)))?;
    let tree = entry.join(TREE);
    std::fs::rename(dir, &tree).map_err(|e| {
        undo(WorkspaceError::Io(format!(
            "cannot move {} to the trash ({}): {e}",
            dir.display(),
            tree.display()
        )))
    })?;
    tracing::info!(from = %dir.display(), entry = %entry.display(), "worktree moved to the trash");
    Ok(Entry {
        dir: entry,
        manifest: manifest.clone(),
    })
}

/// Every entry with a readable manifest (unreadable ones are left alone, and purged by age).
pub fn entries(layout: &Layout) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(layout.trash_dir()) else {
        return Vec::new();
    };
    read.flatten()
        .filter_map(|e| {
            let dir = e.path();
            let text = std::fs::read(dir.join(MANIFEST)).ok()?;
            let manifest = serde_json::from_slice(&text).ok()?;
            Some(Entry { dir, manifest })
        })
        .collect()
}

/// The newest entry not yet restored that holds what was left of the worktree at `worktree`.
pub fn find(layout: &Layout, worktree: &Path) -> Option<Entry> {
    let want = worktree.display().to_string();
    entries(layout)
        .into_iter()
        .filter(|e| e.manifest.worktree == want && e.manifest.restored_at.is_none())
        .filter(|e| e.tree().is_dir())
        .max_by_key(|e| e.manifest.trashed_at)
}

/// What a restore put back, and what stayed in the trash because `dest` had it already.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// Paths relative to the worktree, moved back.
    pub moved: Vec<PathBuf>,
    /// How many files `dest` already had (from the branch): left in the trash, never
    /// overwritten.
    pub kept: usize,
}

/// Puts back into the worktree `dest` (just re-added from its branch) everything of the entry
/// that `dest` does not have: the branch brings the tracked content, the trash what git never
/// had (ignored files). A path `dest` already has is never overwritten; a directory both have
/// is merged file by file. The worktree's own `.git` link in the entry is stale and skipped.
/// The entry is marked restored, so a later restore does not take from it again.
pub fn restore_into(entry: &Entry, dest: &Path) -> Result<Restored, WorkspaceError> {
    let tree = entry.tree();
    let mut out = Restored::default();
    let read = std::fs::read_dir(&tree).map_err(|e| io("read", &tree, e))?;
    for child in read {
        let child = child.map_err(|e| io("read", &tree, e))?;
        if child.file_name() == ".git" {
            continue;
        }
        move_back(&child.path(), dest, Path::new(&child.file_name()), &mut out)?;
    }
    let mut manifest = entry.manifest.clone();
    manifest.restored_at = Some(Timestamp::now());
    let path = entry.dir.join(MANIFEST);
    match serde_json::to_vec_pretty(&manifest) {
        Ok(text) => {
            if let Err(e) = crate::store::atomic::write_atomic(&path, &text) {
                tracing::warn!(path = %path.display(), error = %e, "trash entry not marked restored");
            }
        }
        Err(e) => tracing::warn!(error = %e, "trash manifest not encoded"),
    }
    tracing::info!(
        entry = %entry.dir.display(),
        to = %dest.display(),
        moved = out.moved.len(),
        kept = out.kept,
        "ignored files put back from the trash"
    );
    Ok(out)
}

fn move_back(
    src: &Path,
    root: &Path,
    rel: &Path,
    out: &mut Restored,
) -> Result<(), WorkspaceError> {
    let dst = root.join(rel);
    match std::fs::symlink_metadata(&dst) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::rename(src, &dst).map_err(|e| {
                WorkspaceError::Io(format!(
                    "cannot move {} back to {}: {e}",
                    src.display(),
                    dst.display()
                ))
            })?;
            out.moved.push(rel.to_path_buf());
            Ok(())
        }
        Err(e) => Err(io("read", &dst, e)),
        Ok(meta) => {
            let src_dir = std::fs::symlink_metadata(src)
                .map(|m| m.is_dir())
                .unwrap_or(false);
            if meta.is_dir() && src_dir {
                let read = std::fs::read_dir(src).map_err(|e| io("read", src, e))?;
                for child in read {
                    let child = child.map_err(|e| io("read", src, e))?;
                    move_back(&child.path(), root, &rel.join(child.file_name()), out)?;
                }
            } else {
                out.kept += 1;
            }
            Ok(())
        }
    }
}

/// When an entry was trashed: its manifest says, else (no readable manifest) the folder's
/// modification time.
fn trashed_at(dir: &Path) -> Option<SystemTime> {
    let from_manifest = std::fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_slice::<Manifest>(&t).ok())
        .map(|m| {
            let ms = u64::try_from(m.trashed_at.millis()).unwrap_or(0);
            SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
        });
    from_manifest.or_else(|| std::fs::metadata(dir).and_then(|m| m.modified()).ok())
}

/// Deletes the entries trashed more than `days` days before `now` (the clock is the caller's,
/// so a test can move it). Returns the entries deleted; each is logged, and an entry that
/// cannot be deleted is logged and left for the next start.
pub fn purge(layout: &Layout, days: u32, now: SystemTime) -> Vec<PathBuf> {
    let keep = Duration::from_secs(u64::from(days) * 24 * 3600);
    let root = layout.trash_dir();
    let Ok(read) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut purged = Vec::new();
    for e in read.flatten() {
        let dir = e.path();
        let Some(at) = trashed_at(&dir) else {
            continue;
        };
        let old = now.duration_since(at).is_ok_and(|age| age > keep);
        if !old {
            continue;
        }
        match remove_all(&dir) {
            Ok(()) => {
                tracing::info!(entry = %dir.display(), days, "trash entry purged");
                purged.push(dir);
            }
            Err(error) => {
                tracing::warn!(entry = %dir.display(), %error, "trash entry not purged")
            }
        }
    }
    purged
}

/// `remove_dir_all`, also through folders made read-only (a Go module cache, say): their
/// owner may write them again, which is all deleting their entries needs.
fn remove_all(dir: &Path) -> std::io::Result<()> {
    if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
        return Ok(());
    }
    make_writable(dir);
    std::fs::remove_dir_all(dir)
}

fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let mode = meta.permissions().mode();
    if mode & 0o700 != 0o700 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o700));
    }
    if let Ok(read) = std::fs::read_dir(dir) {
        for e in read.flatten() {
            make_writable(&e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(worktree: &Path, at: Timestamp) -> Manifest {
        Manifest {
            worktree: worktree.display().to_string(),
            repo: "/src/app".into(),
            branch: Some("feat".into()),
            snapshot: None,
            trashed_at: at,
            restored_at: None,
        }
    }

    #[test]
    fn entries_are_purged_after_the_kept_days_by_the_given_clock() {
        let d = tempfile::tempdir().unwrap();
        let layout = Layout::new(d.path().join("home"));
        let now = Timestamp::now();
        let wt = d.path().join("wt");
        std::fs::create_dir_all(wt.join("out")).unwrap();
        std::fs::write(wt.join("out/report.md"), "report").unwrap();
        let entry = put(&layout, &wt, &manifest(&wt, now)).unwrap();
        assert!(!wt.exists());
        assert!(entry.tree().join("out/report.md").exists());
        // A read-only folder inside does not keep the entry from going.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            entry.tree().join("out"),
            std::fs::Permissions::from_mode(0o500),
        )
        .unwrap();
        // An entry without a readable manifest ages by its folder's modification time.
        let stray = layout.trash_dir().join("stray");
        std::fs::create_dir_all(&stray).unwrap();
        let t0 = SystemTime::now();
        let day = Duration::from_secs(24 * 3600);
        assert!(purge(&layout, 7, t0 + 6 * day).is_empty());
        assert!(entry.dir.exists() && stray.exists());
        let mut purged = purge(&layout, 7, t0 + 8 * day);
        purged.sort();
        let mut want = vec![entry.dir.clone(), stray.clone()];
        want.sort();
        assert_eq!(purged, want);
        assert!(!entry.dir.exists() && !stray.exists());
    }

    #[test]
    fn a_second_removal_of_the_same_worktree_gets_its_own_entry_and_find_takes_the_newest() {
        let d = tempfile::tempdir().unwrap();
        let layout = Layout::new(d.path().join("home"));
        let wt = d.path().join("feat x");
        let t = Timestamp::now();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".env"), "A=1").unwrap();
        let first = put(&layout, &wt, &manifest(&wt, t)).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".env"), "A=2").unwrap();
        let second = put(
            &layout,
            &wt,
            &manifest(&wt, Timestamp::from_millis(t.millis() + 1000)),
        )
        .unwrap();
        assert_ne!(first.dir, second.dir);
        let name = first
            .dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.ends_with("-feat-x"), "{name}");
        assert_eq!(find(&layout, &wt), Some(second.clone()));
        // Restoring never overwrites what the destination has, and merges directories.
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".env"), "from the branch").unwrap();
        let r = restore_into(&second, &wt).unwrap();
        assert_eq!(r.kept, 1);
        assert_eq!(
            std::fs::read_to_string(wt.join(".env")).unwrap(),
            "from the branch"
        );
        // Marked restored: the older entry is next.
        assert_eq!(find(&layout, &wt), Some(first));
    }

    #[test]
    fn a_move_that_fails_leaves_the_directory_and_no_entry() {
        let d = tempfile::tempdir().unwrap();
        let layout = Layout::new(d.path().join("home"));
        let missing = d.path().join("gone");
        let e = put(&layout, &missing, &manifest(&missing, Timestamp::now())).unwrap_err();
        assert!(e.to_string().contains("cannot move"), "{e}");
        assert!(e.to_string().contains("gone"), "{e}");
        assert_eq!(std::fs::read_dir(layout.trash_dir()).unwrap().count(), 0);
    }
}
