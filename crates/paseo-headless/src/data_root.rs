//! Where Paseo keeps its data: `$PASEO_HOME`, default `~/.paseo`.

use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum DataRootError {
    #[error("PASEO_HOME is set but empty; unset it or give it a folder")]
    EmptyEnv,
    #[error("cannot find the home folder (HOME is unset); set PASEO_HOME to a folder")]
    NoHome,
    #[error("cannot determine the current folder to resolve PASEO_HOME '{path}': {source}")]
    CurrentDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create the data root {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the data root {0} exists but is not a folder")]
    NotADirectory(PathBuf),
}

/// Resolves the data root from the value of `PASEO_HOME` (if set) and `HOME`, creates it when
/// missing and returns its canonical absolute path, so that two spellings of one folder name the
/// same root (single instance and the lock depend on that).
pub fn resolve(paseo_home: Option<&str>, home: Option<&str>) -> Result<PathBuf, DataRootError> {
    let raw = match paseo_home {
        Some("") => return Err(DataRootError::EmptyEnv),
        Some(value) => PathBuf::from(value),
        None => match home {
            Some(home) if !home.is_empty() => Path::new(home).join(".paseo"),
            _ => return Err(DataRootError::NoHome),
        },
    };
    let absolute = if raw.is_absolute() {
        raw
    } else {
        std::env::current_dir()
            .map_err(|source| DataRootError::CurrentDir {
                path: raw.clone(),
                source,
            })?
            .join(raw)
    };
    create_private_dir(&absolute)?;
    let canonical = absolute
        .canonicalize()
        .map_err(|source| DataRootError::Create {
            path: absolute.clone(),
            source,
        })?;
    if !canonical.is_dir() {
        return Err(DataRootError::NotADirectory(canonical));
    }
    Ok(canonical)
}

/// Resolves the data root from the process environment.
pub fn from_env() -> Result<PathBuf, DataRootError> {
    let paseo_home = std::env::var("PASEO_HOME").ok();
    let home = std::env::var("HOME").ok();
    resolve(paseo_home.as_deref(), home.as_deref())
}

fn create_private_dir(path: &Path) -> Result<(), DataRootError> {
    if path.exists() {
        return if path.is_dir() {
            Ok(())
        } else {
            Err(DataRootError::NotADirectory(path.to_path_buf()))
        };
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        // Agent transcripts and tokens live here: keep them private to the user.
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(path)
        .map_err(|source| DataRootError::Create {
            path: path.to_path_buf(),
            source,
        })
}

/// The folder the logs are written to.
pub fn log_dir(root: &Path) -> PathBuf {
    root.join("logs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_dot_paseo_under_home_and_creates_it() {
        let home = tempfile::tempdir().unwrap();
        let root = resolve(None, Some(home.path().to_str().unwrap())).unwrap();
        assert_eq!(root, home.path().canonicalize().unwrap().join(".paseo"));
        assert!(root.is_dir());
    }

    #[test]
    fn paseo_home_wins_and_is_canonical() {
        let dir = tempfile::tempdir().unwrap();
        let spelled = format!("{}/./x/../root", dir.path().display());
        std::fs::create_dir_all(dir.path().join("x")).unwrap();
        let root = resolve(Some(&spelled), Some("/nonexistent")).unwrap();
        assert_eq!(root, dir.path().canonicalize().unwrap().join("root"));
    }

    #[test]
    fn rejects_empty_env_missing_home_and_files() {
        assert!(matches!(
            resolve(Some(""), Some("/h")),
            Err(DataRootError::EmptyEnv)
        ));
        assert!(matches!(resolve(None, None), Err(DataRootError::NoHome)));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let err = resolve(Some(file.to_str().unwrap()), None).unwrap_err();
        assert!(err.to_string().contains("is not a folder"), "{err}");
    }
}
