//! Find in the timeline (the find bar): a search of the open agent's whole timeline file. One
//! search runs per window: a new query, or closing the bar, cancels the one before it, so typing
//! never queues up reads of a long history.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::{agent_id, runtime, Answer};
use crate::state::AppState;
use paseo_core::store::timeline::search::TimelineSearch;
use tauri::{Runtime, State};

/// The running search of each window, by label: its cancel flag.
#[derive(Default)]
pub struct Searches(Mutex<HashMap<String, Arc<AtomicBool>>>);

impl Searches {
    /// Cancels the window's running search; a fresh flag for the next one when `start`.
    fn replace(&self, window: &str, start: bool) -> Option<Arc<AtomicBool>> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = map.remove(window) {
            old.store(true, Ordering::Relaxed);
        }
        start.then(|| {
            let flag = Arc::new(AtomicBool::new(false));
            map.insert(window.to_string(), flag.clone());
            flag
        })
    }

    fn finished(&self, window: &str, flag: &Arc<AtomicBool>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.get(window).is_some_and(|f| Arc::ptr_eq(f, flag)) {
            map.remove(window);
        }
    }
}

/// Finds `query` (case-insensitive) in the agent's whole timeline; answers the items with
/// matches (seq and count, oldest first) and the total. A later search from the same window
/// cancels this one (it answers code `canceled`).
#[tauri::command]
pub async fn search_timeline<R: Runtime>(
    window: tauri::Window<R>,
    state: State<'_, AppState>,
    searches: State<'_, Searches>,
    agent_id: String,
    query: String,
) -> Answer<TimelineSearch> {
    let id = self::agent_id("agentId", &agent_id)?;
    let rt = runtime(&state)?;
    let label = window.label().to_string();
    let flag = searches
        .replace(&label, true)
        .unwrap_or_else(|| Arc::new(AtomicBool::new(false)));
    let result = rt.search_timeline(id, query, flag.clone()).await;
    searches.finished(&label, &flag);
    Ok(result?)
}

/// Stops the window's running search, if any (the find bar closed).
#[tauri::command]
pub fn cancel_timeline_search<R: Runtime>(window: tauri::Window<R>, searches: State<'_, Searches>) {
    searches.replace(window.label(), false);
}
