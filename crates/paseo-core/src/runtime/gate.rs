//! The bound on concurrent reads of what agents changed: the handle's reads and the actor's
//! counts share it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::RuntimeError;
use crate::workspaces::changes::ChangesError;

/// How many reads of changes (each a few git commands over a working tree) run at once. Any
/// agent may read any agent's changes (SPEC 8), so without a bound a loop of calls would run git
/// on every core and fill the blocking pool.
pub const CHANGES_CONCURRENCY: usize = 4;
/// How long a read waits for its turn before it is refused as busy.
pub const CHANGES_WAIT: Duration = Duration::from_secs(10);

/// The bound on concurrent reads of changes: the handle's reads and the actor's counts share it.
#[derive(Clone)]
pub(crate) struct Gate(Arc<Semaphore>);

impl Default for Gate {
    fn default() -> Self {
        Gate(Arc::new(Semaphore::new(CHANGES_CONCURRENCY)))
    }
}

impl Gate {
    /// A turn to run git, waiting at most [`CHANGES_WAIT`].
    pub(super) async fn enter(&self) -> Result<OwnedSemaphorePermit, RuntimeError> {
        match tokio::time::timeout(CHANGES_WAIT, self.0.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_)) => Err(RuntimeError::Stopped),
            Err(_) => Err(ChangesError::Busy {
                running: CHANGES_CONCURRENCY,
                waited_secs: CHANGES_WAIT.as_secs(),
            }
            .into()),
        }
    }

    /// A turn to run git, however long it takes (`None`: the gate is closed).
    pub(super) async fn queue(self) -> Option<OwnedSemaphorePermit> {
        self.0.acquire_owned().await.ok()
    }
}
