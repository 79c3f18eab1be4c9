//! The running timeline search of each scope (a window, by its label): a new search, or the
//! find bar closing, cancels the one before it, so typing never queues up reads of a long
//! history.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::RuntimeHandle;
use crate::config::NotificationsConfig;
use crate::runtime::{blocking, RuntimeError};

/// Each scope's running search: its cancel flag.
#[derive(Default)]
pub(crate) struct Searches(Mutex<HashMap<String, Arc<AtomicBool>>>);

impl Searches {
    fn replace(&self, scope: &str, start: bool) -> Option<Arc<AtomicBool>> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = map.remove(scope) {
            old.store(true, Ordering::Relaxed);
        }
        start.then(|| {
            let flag = Arc::new(AtomicBool::new(false));
            map.insert(scope.to_string(), flag.clone());
            flag
        })
    }

    /// Cancels the scope's running search and answers the flag of the one starting.
    pub(crate) fn start(&self, scope: &str) -> Arc<AtomicBool> {
        self.replace(scope, true)
            .unwrap_or_else(|| Arc::new(AtomicBool::new(false)))
    }

    pub(crate) fn cancel(&self, scope: &str) {
        self.replace(scope, false);
    }

    /// The search ended: forgotten unless a newer one took its place.
    pub(crate) fn finished(&self, scope: &str, flag: &Arc<AtomicBool>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.get(scope).is_some_and(|f| Arc::ptr_eq(f, flag)) {
            map.remove(scope);
        }
    }
}

impl RuntimeHandle {
    /// config.json `notifications` as the file says now (defaults when there is no file).
    pub(crate) async fn notification_settings(&self) -> Result<NotificationsConfig, RuntimeError> {
        let root = self.layout.home.clone();
        Ok(blocking(move || crate::config::Config::load(&root))
            .await??
            .notifications)
    }

    /// Writes config.json `notifications`, the rest of the file kept; a file that does not
    /// parse is refused (code `config`) and left alone.
    pub(crate) async fn set_notification_settings(
        &self,
        settings: NotificationsConfig,
    ) -> Result<(), RuntimeError> {
        let root = self.layout.home.clone();
        blocking(move || crate::config::write_notifications(&root, settings)).await??;
        Ok(())
    }
}
