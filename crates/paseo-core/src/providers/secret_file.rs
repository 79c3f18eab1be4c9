//! Secrets handed to an agent CLI through a file instead of its command line (SPEC 14: argv is
//! readable by every local user in /proc/*/cmdline): a 0600 file in the private secrets folder,
//! which lives exactly as long as the session that reads it.

use std::io;
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

use super::{ProviderError, Session, TurnInput};
use crate::store::atomic::write_private;

/// A private file removed when dropped.
#[derive(Debug)]
pub struct SecretFile {
    path: PathBuf,
}

impl SecretFile {
    /// Writes `bytes` to a new file named `name` in `dir` (mode 0600, written atomically so a
    /// reader never sees half of it).
    pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<SecretFile> {
        let path = dir.join(name);
        write_private(&path, bytes)?;
        Ok(SecretFile { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SecretFile {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_file(&self.path) {
            if error.kind() != io::ErrorKind::NotFound {
                tracing::warn!(path = %self.path.display(), %error, "cannot remove a secrets file");
            }
        }
    }
}

/// A session that owns secret files: they go when the session is closed (or dropped).
pub struct WithSecrets {
    inner: Box<dyn Session>,
    files: Vec<SecretFile>,
}

impl WithSecrets {
    pub fn wrap(inner: Box<dyn Session>, files: Vec<SecretFile>) -> Box<dyn Session> {
        if files.is_empty() {
            return inner;
        }
        Box::new(WithSecrets { inner, files })
    }
}

impl Session for WithSecrets {
    fn send(&mut self, input: TurnInput) -> Result<(), ProviderError> {
        self.inner.send(input)
    }
    fn interrupt(&mut self) -> Result<(), ProviderError> {
        self.inner.interrupt()
    }
    fn respond_permission(&mut self, request_id: &str, allow: bool) -> Result<(), ProviderError> {
        self.inner.respond_permission(request_id, allow)
    }
    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        let WithSecrets { inner, files } = *self;
        Box::pin(async move {
            inner.close().await;
            drop(files);
        })
    }
}
