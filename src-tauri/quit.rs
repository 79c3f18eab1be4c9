//! Quitting the window app. The user's gestures (tray Quit; closing the last window when there is
//! no tray to hide to) ask first with a native confirm when agents are running. Every way out,
//! SIGINT and SIGTERM included (no confirm there), then takes the same clean path: the event loop
//! ends, and on its way out the backend stops every agent, persists every record and releases the
//! data root (the exit hook in `desktop.rs`), and the process exits 0.

use crate::native::{self, Confirm};
use crate::state::AppState;
use paseo_core::engine::ListFilter;
use paseo_core::model::{Bucket, Status};
use std::sync::atomic::{AtomicBool, Ordering};
use tauri::{AppHandle, Manager, Runtime};

/// The confirm's title (tests find the dialog window by it).
pub const CONFIRM_TITLE: &str = "Quit Paseo?";

/// Set while a quit confirm is open, so a second Quit does not stack another dialog.
static CONFIRMING: AtomicBool = AtomicBool::new(false);

/// A running agent as the confirm names it: its title and whether quitting loses its turn for
/// good. Claude Code and Codex keep their session and resume it when the agent is next used; a
/// shell or command turn is a process that is killed, and nothing resumes it (docs/providers.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub title: String,
    pub resumes: bool,
}

/// Names for the dialog: the first few, then how many more.
fn names(list: &[&Running]) -> String {
    let shown: Vec<&str> = list.iter().take(6).map(|r| r.title.as_str()).collect();
    match list.len().saturating_sub(6) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// What quitting stops, by the one status rule (the status bar's words): the agents running a
/// turn or starting, and the queued ones, which wait for a live slot and have run nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stops {
    pub running: Vec<Running>,
    pub queued: Vec<Running>,
}

/// What the confirm says: how many run (the status bar's "running"), which of them resume and
/// which are stopped for good, then the queued ones apart; `None` when nothing runs or waits
/// (quit at once: nothing would be lost).
pub fn confirm_message(stops: &Stops) -> Option<String> {
    let (running, queued) = (&stops.running, &stops.queued);
    if running.is_empty() && queued.is_empty() {
        return None;
    }
    let n = running.len();
    let mut message = match (n, queued.len()) {
        (0, q) => format!(
            "{q} agent{} queued, waiting for a live slot: {}. Quitting leaves {} unstarted.",
            if q == 1 { " is" } else { "s are" },
            names(&queued.iter().collect::<Vec<_>>()),
            if q == 1 { "it" } else { "them" }
        ),
        (1, _) => "1 agent is running. Quitting stops it.".to_string(),
        (n, _) => format!("{n} agents are running. Quitting stops them."),
    };
    let (resume, lost): (Vec<&Running>, Vec<&Running>) = running.iter().partition(|r| r.resumes);
    if !resume.is_empty() {
        message.push_str(&format!(
            "\n\nResume their session when next used: {}.",
            names(&resume)
        ));
    }
    if !lost.is_empty() {
        message.push_str(&format!(
            "\n\nStopped for good (a shell or command turn is killed and does not resume; its \
             output so far is kept): {}.",
            names(&lost)
        ));
    }
    if !queued.is_empty() && n > 0 {
        let q: Vec<&Running> = queued.iter().collect();
        message.push_str(&format!(
            "\n\nQueued, not started yet (their first prompt has not run): {}.",
            names(&q)
        ));
    }
    Some(message)
}

/// The agents quitting stops, each with whether its provider resumes sessions.
async fn stops<R: Runtime>(app: &AppHandle<R>) -> Stops {
    // A runtime that no longer answers has nothing left to stop.
    let Some(runtime) = app.state::<AppState>().runtime() else {
        return Stops::default();
    };
    let filter = ListFilter {
        statuses: Some(vec![Status::Initializing, Status::Running]),
        ..ListFilter::default()
    };
    let agents = match crate::reads::agents(&runtime, filter).await {
        Ok(agents) => agents,
        Err(error) => {
            tracing::warn!(%error, "cannot list the running agents before quitting");
            return Stops::default();
        }
    };
    let kinds = crate::reads::providers(&runtime).await.unwrap_or_default();
    let mut out = Stops::default();
    for a in agents {
        let kind = kinds.iter().find(|p| p.id == a.record.provider.as_str());
        let title = a.record.title.trim();
        let entry = Running {
            resumes: kind
                .and_then(|p| paseo_core::model::ProviderKind::parse(&p.kind))
                .is_some_and(|k| k.resumes()),
            title: if title.is_empty() {
                a.record.id.to_string()
            } else {
                title.to_string()
            },
        };
        // A turn asking for a permission runs (its process waits); a held start has run
        // nothing and stays held across the restart.
        match a.bucket {
            Bucket::Queued => out.queued.push(entry),
            Bucket::Running => out.running.push(entry),
            _ if a.status == Status::Running => out.running.push(entry),
            _ => {}
        }
    }
    out
}

/// Quits, after a confirm if agents are running. Returns at once; the answer comes later.
pub fn request<R: Runtime>(app: &AppHandle<R>) {
    if CONFIRMING.swap(true, Ordering::SeqCst) {
        tracing::info!("a quit confirm is already open");
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let stops = stops(&app).await;
        let Some(message) = confirm_message(&stops) else {
            CONFIRMING.store(false, Ordering::SeqCst);
            tracing::info!("nothing running: quitting");
            app.exit(0);
            return;
        };
        tracing::info!(%message, "asking before quitting");
        let confirm = Confirm {
            title: CONFIRM_TITLE.into(),
            message,
            action: "Quit".into(),
        };
        let answer = native::ask(&app, confirm).await;
        CONFIRMING.store(false, Ordering::SeqCst);
        match answer {
            Ok(true) => {
                tracing::info!(
                    running = stops.running.len(),
                    queued = stops.queued.len(),
                    "quit confirmed: stopping the agents"
                );
                app.exit(0);
            }
            Ok(false) => tracing::info!("quit canceled"),
            Err(error) => tracing::error!(%error, "cannot ask before quitting; not quitting"),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(title: &str, resumes: bool) -> Running {
        Running {
            title: title.into(),
            resumes,
        }
    }

    fn running(list: Vec<Running>) -> Stops {
        Stops {
            running: list,
            queued: Vec::new(),
        }
    }

    #[test]
    fn the_confirm_says_which_agents_resume_and_which_are_stopped_for_good() {
        assert_eq!(confirm_message(&Stops::default()), None);
        let one = confirm_message(&running(vec![agent("build", false)])).unwrap();
        assert!(
            one.starts_with("1 agent is running. Quitting stops it."),
            "{one}"
        );
        assert!(one.contains("Stopped for good"), "{one}");
        assert!(one.ends_with(": build."), "{one}");
        assert!(!one.contains("Resume"), "{one}");
        let mixed = confirm_message(&running(vec![
            agent("lead", true),
            agent("build", false),
            agent("review", true),
        ]))
        .unwrap();
        assert!(
            mixed.starts_with("3 agents are running. Quitting stops them."),
            "{mixed}"
        );
        assert!(mixed.contains("when next used: lead, review."), "{mixed}");
        assert!(
            mixed.contains("does not resume; its output so far is kept): build."),
            "{mixed}"
        );
        let many: Vec<Running> = (0..9).map(|i| agent(&format!("w{i}"), false)).collect();
        let many = confirm_message(&running(many)).unwrap();
        assert!(
            many.ends_with("w0, w1, w2, w3, w4, w5 and 3 more."),
            "{many}"
        );
    }

    /// The status bar's "3 running · 3 queued" reads the same in the confirm.
    #[test]
    fn queued_agents_are_not_counted_as_running() {
        let stops = Stops {
            running: (1..=3)
                .map(|i| agent(&format!("worker {i}"), false))
                .collect(),
            queued: (4..=6)
                .map(|i| agent(&format!("worker {i}"), false))
                .collect(),
        };
        let m = confirm_message(&stops).unwrap();
        assert!(
            m.starts_with("3 agents are running. Quitting stops them."),
            "{m}"
        );
        assert!(m.contains("): worker 1, worker 2, worker 3."), "{m}");
        assert!(
            m.ends_with("Queued, not started yet (their first prompt has not run): worker 4, worker 5, worker 6."),
            "{m}"
        );
        let only = Stops {
            running: Vec::new(),
            queued: vec![agent("w", true)],
        };
        assert_eq!(
            confirm_message(&only).unwrap(),
            "1 agent is queued, waiting for a live slot: w. Quitting leaves it unstarted."
        );
    }
}
