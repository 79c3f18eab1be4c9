//! Quitting the window app. The user's gestures (tray Quit; closing the last window when there is
//! no tray to hide to) ask first with a native confirm when agents are running. Every way out,
//! SIGINT and SIGTERM included (no confirm there), then takes the same clean path: the event loop
//! ends, and on its way out the backend stops every agent, persists every record and releases the
//! data root (the exit hook in `desktop.rs`), and the process exits 0.

use crate::native::{self, Confirm};
use crate::state::AppState;
use paseo_core::engine::ListFilter;
use paseo_core::model::Status;
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

/// What the confirm says about the `running` agents (initializing or running): which resume and
/// which are stopped for good; `None` when nothing runs (quit at once: nothing would be lost).
pub fn confirm_message(running: &[Running]) -> Option<String> {
    if running.is_empty() {
        return None;
    }
    let n = running.len();
    let mut message = if n == 1 {
        "1 agent is running. Quitting stops it.".to_string()
    } else {
        format!("{n} agents are running. Quitting stops them.")
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
    Some(message)
}

/// The running agents, each with whether its provider resumes sessions.
async fn running<R: Runtime>(app: &AppHandle<R>) -> Vec<Running> {
    // A runtime that no longer answers has nothing left to stop.
    let Some(runtime) = app.state::<AppState>().runtime() else {
        return Vec::new();
    };
    let filter = ListFilter {
        statuses: Some(vec![Status::Initializing, Status::Running]),
        ..ListFilter::default()
    };
    let agents = match runtime.list(filter, usize::MAX).await {
        Ok((agents, _)) => agents,
        Err(error) => {
            tracing::warn!(%error, "cannot list the running agents before quitting");
            return Vec::new();
        }
    };
    let kinds = runtime.providers();
    agents
        .into_iter()
        .map(|a| {
            let kind = kinds.iter().find(|p| p.id == a.record.provider.as_str());
            let title = a.record.title.trim();
            Running {
                resumes: kind
                    .and_then(|p| paseo_core::model::ProviderKind::parse(&p.kind))
                    .is_some_and(|k| k.resumes()),
                title: if title.is_empty() {
                    a.record.id.to_string()
                } else {
                    title.to_string()
                },
            }
        })
        .collect()
}

/// Quits, after a confirm if agents are running. Returns at once; the answer comes later.
pub fn request<R: Runtime>(app: &AppHandle<R>) {
    if CONFIRMING.swap(true, Ordering::SeqCst) {
        tracing::info!("a quit confirm is already open");
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let running = running(&app).await;
        let Some(message) = confirm_message(&running) else {
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
                    running = running.len(),
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

    #[test]
    fn the_confirm_says_which_agents_resume_and_which_are_stopped_for_good() {
        assert_eq!(confirm_message(&[]), None);
        let one = confirm_message(&[agent("build", false)]).unwrap();
        assert!(
            one.starts_with("1 agent is running. Quitting stops it."),
            "{one}"
        );
        assert!(one.contains("Stopped for good"), "{one}");
        assert!(one.ends_with(": build."), "{one}");
        assert!(!one.contains("Resume"), "{one}");
        let mixed = confirm_message(&[
            agent("lead", true),
            agent("build", false),
            agent("review", true),
        ])
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
        let many = confirm_message(&many).unwrap();
        assert!(
            many.ends_with("w0, w1, w2, w3, w4, w5 and 3 more."),
            "{many}"
        );
    }
}
