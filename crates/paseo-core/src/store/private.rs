//! The data root kept private at every start (SPEC 16, and SPEC 14 on secrets): the folder
//! holds transcripts, records and the user token, so no other local user may list or read it.
//! An existing root (an upstream `~/.paseo`, any `PASEO_HOME`) keeps whatever mode it was
//! given, and a `chmod` or an archive tool can loosen it later; so every start checks the root
//! and the secrets in it, tightens what is loose and says so (log and a notice in the UI).
//! What the app creates under the root is private from the start (`atomic`, the timelines).

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::Layout;

/// Mode of every folder the app makes under the data root.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file the app makes under the data root.
pub const FILE_MODE: u32 = 0o600;

/// Sets `path` to `mode` when it grants anything to the group or others; returns the mode it
/// had when it changed it. A missing path is fine (nothing to protect).
fn tighten(path: &Path, mode: u32) -> io::Result<Option<u32>> {
    // Not following links: a link planted in place of a secret is not ours to chmod.
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        return Ok(None);
    }
    let had = meta.permissions().mode() & 0o777;
    if had & 0o077 == 0 {
        return Ok(None);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(Some(had))
}

/// Makes the data root (0700), the user token (0600), the secrets folder (0700) and the files
/// in it (0600), and the logs folder and its files, private again if something loosened them.
/// Returns one message per path it fixed or could not fix, each also logged as a warning.
pub fn secure_root(layout: &Layout) -> Vec<String> {
    // (path, mode, whether a loose mode means someone loosened it)
    let mut checks = vec![
        (layout.home.clone(), DIR_MODE, true),
        (layout.mcp_token_path(), FILE_MODE, true),
    ];
    // Log files of earlier versions were made with the umask's mode (inside the private logs
    // folder): tightened quietly, as nobody loosened them.
    for (dir, loosened) in [(layout.secrets_dir(), true), (layout.logs_dir(), false)] {
        checks.push((dir.clone(), DIR_MODE, true));
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                checks.extend(entries.flatten().map(|e| (e.path(), FILE_MODE, loosened)))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(path = %dir.display(), %error, "cannot list a private folder");
            }
        }
    }
    let mut said = Vec::new();
    for (path, mode, loosened) in checks {
        match tighten(&path, mode) {
            Ok(None) => {}
            Ok(Some(had)) if !loosened => {
                tracing::debug!(path = %path.display(), was = format!("{had:o}"), "made private");
            }
            Ok(Some(had)) => {
                tracing::warn!(
                    path = %path.display(),
                    was = format!("{had:o}"),
                    now = format!("{mode:o}"),
                    "the data root was readable by other users; made it private again"
                );
                said.push(format!(
                    "{} was readable by other users (mode {had:o}); it is private again \
                     (mode {mode:o}). Something changed its permissions since the app last ran.",
                    path.display()
                ));
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot make a data root path private");
                said.push(format!(
                    "{} may be readable by other users and cannot be made private: {error}",
                    path.display()
                ));
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    fn set(p: &Path, m: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }

    #[test]
    fn a_loosened_root_and_its_secrets_are_made_private_and_said_so() {
        let d = tempfile::tempdir().unwrap();
        let layout = Layout::new(d.path().join("root"));
        std::fs::create_dir_all(layout.secrets_dir()).unwrap();
        std::fs::create_dir_all(layout.logs_dir()).unwrap();
        std::fs::write(layout.mcp_token_path(), "t").unwrap();
        std::fs::write(layout.secrets_dir().join("s.json"), "{}").unwrap();
        std::fs::write(layout.logs_dir().join("paseo.log"), "").unwrap();
        set(&layout.home, 0o755);
        set(&layout.secrets_dir(), 0o755);
        set(&layout.logs_dir(), 0o750);
        set(&layout.mcp_token_path(), 0o644);
        set(&layout.secrets_dir().join("s.json"), 0o640);
        set(&layout.logs_dir().join("paseo.log"), 0o644);
        let said = secure_root(&layout);
        // The log file is the appender's own (umask mode): fixed without a word.
        assert_eq!(said.len(), 5, "{said:#?}");
        assert!(
            said[0].contains("readable by other users (mode 755)"),
            "{said:?}"
        );
        assert_eq!(mode(&layout.home), 0o700);
        assert_eq!(mode(&layout.secrets_dir()), 0o700);
        assert_eq!(mode(&layout.logs_dir()), 0o700);
        assert_eq!(mode(&layout.mcp_token_path()), 0o600);
        assert_eq!(mode(&layout.secrets_dir().join("s.json")), 0o600);
        assert_eq!(mode(&layout.logs_dir().join("paseo.log")), 0o600);
        // Private already: nothing to say.
        assert!(secure_root(&layout).is_empty());
    }
}
