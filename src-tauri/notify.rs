//! Desktop notifications: an agent needs the user (a permission request, a held start), failed,
//! or a root agent finished (subagents too when the user asks: by default their parent receives
//! the finish as a notice). Never for an agent whose tab the user is looking at (shown in a
//! focused window); one notification per event, a burst coalesced into one ("5 agents
//! finished"); clicking it opens the agent the way the tray's entries do.
//!
//! What to notify is decided by [`plan`], a pure function of agent snapshots before and after a
//! burst of changes, the settings (config.json `notifications`) and the agents being watched.
//! Which agents get a notification is the core's alert rule (`paseo_core::model::attention`,
//! each snapshot's `alert`), the one the tray lists, so the two never disagree. Sending is
//! [`dbus`]'s job (freedesktop notifications on the session bus).

use crate::names::{display_title, on_host};
use paseo_core::config::NotificationsConfig;
use paseo_core::model::{AgentId, Alert, APPROVE_START};
use paseo_core::runtime::{AgentSnapshot, Event};
use paseo_core::server::Server;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use tauri::{AppHandle, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;

#[cfg(target_os = "linux")]
pub mod dbus;

/// A change that would notify, and those arriving within this long of it, are one burst: one
/// notification.
pub const COALESCE: Duration = Duration::from_millis(300);

/// The longest a burst stays open however many changes keep it going: a steady stream of
/// failures still notifies within this.
pub const BURST_MAX: Duration = Duration::from_millis(1500);

/// A burst opened at `at`: when it closes if nothing joins it, and when it closes regardless.
fn burst_from(at: tokio::time::Instant) -> (tokio::time::Instant, tokio::time::Instant) {
    (at + COALESCE, at + BURST_MAX)
}
/// Agents named one per line in a coalesced notification; the rest are counted.
pub const MAX_LINES: usize = 5;
/// Longest reason detail (an error's first line, a tool name) shown, in characters.
pub const MAX_DETAIL_CHARS: usize = 120;

#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("{file}: {message}")]
    Config { file: String, message: String },
    #[error("cannot write {file}: {source}")]
    Write {
        file: String,
        source: std::io::Error,
    },
    #[cfg(target_os = "linux")]
    #[error("session bus: {0}")]
    Bus(#[from] zbus::Error),
}

// ---------------------------------------------------------------------------------------------
// The decision (pure)

/// One notification to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// Plain text: the agent's title, or a count for a burst.
    pub summary: String,
    /// Plain text (the sender escapes it for servers that read markup).
    pub body: String,
    /// What a click opens: the agent, or the most urgent one of a burst.
    pub open: AgentId,
    /// Every agent the notification is about.
    pub agents: Vec<AgentId>,
}

/// What an agent was last notified for (or would have been), per agent.
type Occurrence = (Alert, String);

/// Why `agent` would be notified now, with what tells this occurrence from the previous one
/// (the request id, or when attention was raised), so one event is never sent twice.
fn occurrence(agent: &AgentSnapshot) -> Option<Occurrence> {
    let when = || {
        agent
            .record
            .attention_timestamp
            .map(|t| t.millis().to_string())
            .unwrap_or_default()
    };
    let kind = agent.alert?;
    if kind == Alert::Permission {
        let request = agent.pending_permission.as_ref()?;
        return Some((kind, request.request_id.clone()));
    }
    Some((kind, when()))
}

fn wanted(kind: Alert, settings: &NotificationsConfig) -> bool {
    settings.enabled
        && match kind {
            Alert::Permission => settings.permission,
            Alert::Failed => settings.error,
            Alert::Finished => settings.finished,
            Alert::SubagentFinished => settings.subagent_finished,
        }
}

/// What to show for a burst of changes: `before` holds the agents' previous snapshots (an agent
/// missing there is new), `after` the changed agents as they are now. An agent is notified when
/// it newly needs the user, failed or finished (its snapshot's `alert`, which the tray lists by
/// too), the settings ask for that kind, and it is not in `watched` (its tab shown in a focused
/// window). `None`: nothing to show.
pub fn plan(
    before: &[AgentSnapshot],
    after: &[AgentSnapshot],
    settings: &NotificationsConfig,
    watched: &HashSet<AgentId>,
) -> Option<Note> {
    let previous: HashMap<AgentId, Occurrence> = before
        .iter()
        .filter_map(|agent| Some((agent.id(), occurrence(agent)?)))
        .collect();
    plan_since(&previous, after, settings, watched)
}

/// [`plan`] against what each agent was last notified for (agents with none are absent).
fn plan_since(
    previous: &HashMap<AgentId, Occurrence>,
    after: &[AgentSnapshot],
    settings: &NotificationsConfig,
    watched: &HashSet<AgentId>,
) -> Option<Note> {
    let mut events: Vec<(Alert, &AgentSnapshot)> = Vec::new();
    let mut seen = HashSet::new();
    for agent in after {
        if !seen.insert(agent.id()) || watched.contains(&agent.id()) {
            continue;
        }
        let Some(now) = occurrence(agent) else {
            continue;
        };
        if previous.get(&agent.id()) == Some(&now) || !wanted(now.0, settings) {
            continue;
        }
        events.push((now.0, agent));
    }
    // Stable: within a kind, the order the changes came in.
    events.sort_by_key(|(kind, _)| *kind);
    let (first_kind, first) = *events.first()?;
    let agents: Vec<AgentId> = events.iter().map(|(_, agent)| agent.id()).collect();
    if events.len() == 1 {
        return Some(Note {
            summary: display_title(first),
            body: reason(first_kind, first),
            open: first.id(),
            agents,
        });
    }
    let n = events.len();
    let summary = if events.iter().all(|(kind, _)| *kind == first_kind) {
        match first_kind {
            Alert::Permission => format!("{n} agents need permission"),
            Alert::Failed => format!("{n} agents failed"),
            Alert::Finished | Alert::SubagentFinished => format!("{n} agents finished"),
        }
    } else {
        format!("{n} agents need you")
    };
    let mut lines: Vec<String> = events
        .iter()
        .take(MAX_LINES)
        .map(|(kind, agent)| format!("{} — {}", display_title(agent), reason(*kind, agent)))
        .collect();
    if n > MAX_LINES {
        lines.push(format!("and {} more", n - MAX_LINES));
    }
    Some(Note {
        summary,
        body: lines.join("\n"),
        open: first.id(),
        agents,
    })
}

/// The reason in UI.md's status language: "needs permission to run Bash", "failed: exit 3",
/// "finished".
fn reason(kind: Alert, agent: &AgentSnapshot) -> String {
    match kind {
        Alert::Permission => match &agent.pending_permission {
            Some(p) if p.is_held_start() => APPROVE_START.to_string(),
            // SPEC 18: which tree stopped, and how much it used.
            Some(p) if p.is_budget() => match p.input["tree"].as_str().map(detail) {
                Some(tree) if !tree.is_empty() => format!("tree {tree:?} stopped: {}", p.tool_name),
                _ => format!("a tree stopped: {}", p.tool_name),
            },
            Some(p) => format!("needs permission to run {}", detail(&p.tool_name)),
            None => "needs permission".to_string(),
        },
        Alert::Failed => match agent.record.last_error.as_deref().map(detail) {
            Some(error) if !error.is_empty() => format!("failed: {error}"),
            _ => "failed".to_string(),
        },
        Alert::Finished | Alert::SubagentFinished => "finished".to_string(),
    }
}

/// The first line of `text`, whitespace collapsed, at most [`MAX_DETAIL_CHARS`] characters.
fn detail(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let words: Vec<&str> = line.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() <= MAX_DETAIL_CHARS {
        return line;
    }
    let mut short: String = line.chars().take(MAX_DETAIL_CHARS - 1).collect();
    short.push('…');
    short
}

// ---------------------------------------------------------------------------------------------
// The running side: events in, notifications out

/// What one window reports: whether it has focus and which agent's tab it shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Presence {
    pub focused: bool,
    pub agent: Option<AgentId>,
}

/// The notifier's state, managed by the app: the settings in force and each window's presence.
pub struct Notifications {
    settings: Mutex<NotificationsConfig>,
    /// Signalled when the settings change: a burst never spans two settings.
    changed: tokio::sync::Notify,
    presence: Mutex<HashMap<String, Presence>>,
}

impl Notifications {
    /// Settings from config.json (the defaults when it cannot be used: the backend already
    /// reported why).
    pub fn new(data_root: &Path) -> Notifications {
        let settings = paseo_core::config::Config::load(data_root)
            .map(|config| config.notifications)
            .unwrap_or_default();
        Notifications {
            settings: Mutex::new(settings),
            changed: tokio::sync::Notify::new(),
            presence: Mutex::new(HashMap::new()),
        }
    }

    pub fn settings(&self) -> NotificationsConfig {
        *lock(&self.settings)
    }

    /// Applies `settings` at once (the runtime wrote them into config.json: the API's
    /// `setNotificationSettings`).
    pub fn apply_settings(&self, settings: NotificationsConfig) {
        *lock(&self.settings) = settings;
        self.changed.notify_waiters();
    }

    pub fn set_presence(&self, label: &str, presence: Presence) {
        lock(&self.presence).insert(label.to_string(), presence);
    }

    /// A window lost focus (the window system says so, whatever its page reported).
    pub fn blurred(&self, label: &str) {
        if let Some(p) = lock(&self.presence).get_mut(label) {
            p.focused = false;
        }
    }

    pub fn forget(&self, label: &str) {
        lock(&self.presence).remove(label);
    }

    /// Agents whose tab is shown in a focused window.
    pub fn watched(&self) -> HashSet<AgentId> {
        lock(&self.presence)
            .values()
            .filter(|p| p.focused)
            .filter_map(|p| p.agent)
            .collect()
    }
}

/// Follows the runtime's events and shows what [`plan`] decides, until the runtime stops.
/// Without a session bus (or a notification server on it) nothing is shown; the rest of the
/// app does not care.
/// A click on a notification calls `open` with its agent (the tray's way of opening one).
#[cfg(target_os = "linux")]
pub fn spawn<R: Runtime>(app: &AppHandle<R>, runtime: Server, open: fn(&AppHandle<R>, AgentId)) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let opener = app.clone();
        let desktop = match dbus::Desktop::connect(move |agent| {
            open(&opener, agent);
        })
        .await
        {
            Ok(desktop) => desktop,
            Err(error) => {
                tracing::info!(%error, "no desktop notifications");
                return;
            }
        };
        follow(&app, runtime, |note| {
            let desktop = desktop.clone();
            async move { desktop.show(&note).await }
        })
        .await;
    });
}

#[cfg(not(target_os = "linux"))]
pub fn spawn<R: Runtime>(_app: &AppHandle<R>, _runtime: Server, _open: fn(&AppHandle<R>, AgentId)) {
}

async fn follow<R, F, Fut>(app: &AppHandle<R>, runtime: Server, show: F)
where
    R: Runtime,
    F: Fn(Note) -> Fut,
    Fut: std::future::Future<Output = Result<u32, NotifyError>>,
{
    // Subscribed before the first snapshot: a change in between is seen twice, never missed
    // (and `plan` sends an occurrence once). A connected host's agents come in the same
    // stream, named by their host (SPEC 17).
    let mut rx = with_hosts(&runtime);
    // Only agents with an alert can have an occurrence (the runtime's query, the tray's too): the
    // whole fleet's snapshots would be built for nothing (hundreds of MB at 100,000 agents).
    let Ok(found) = crate::reads::alerts(&runtime).await else {
        return;
    };
    let mut known: HashMap<AgentId, Occurrence> = found
        .agents
        .iter()
        .filter_map(|agent| Some((agent.id(), occurrence(agent)?)))
        .collect();
    drop(found);
    let Some(state) = app.try_state::<Notifications>() else {
        return;
    };
    loop {
        let mut changed: Vec<AgentSnapshot> = Vec::new();
        let mut lagged = false;
        // A change that would notify opens a burst; what follows joins it, and each further
        // change that would notify keeps it open COALESCE longer (up to BURST_MAX from its
        // opening), so agents ending together make one notification however busy the machine.
        // Other changes (output, a turn starting) open nothing: they cannot cut a burst short.
        // The burst is judged by the settings in force when it opened, and closes early when
        // they change.
        let mut deadline: Option<(tokio::time::Instant, tokio::time::Instant)> = None;
        let mut settings = state.settings();
        loop {
            let next = match deadline {
                None => {
                    let next = recv(&mut rx).await;
                    settings = state.settings();
                    next
                }
                Some((at, _)) => tokio::select! {
                    next = tokio::time::timeout_at(at, recv(&mut rx)) => match next {
                        Ok(next) => next,
                        Err(_) => break,
                    },
                    _ = state.changed.notified() => break,
                },
            };
            let agent = match next {
                Ok(Event::AgentUpdated { agent }) | Ok(Event::AgentArchived { agent }) => *agent,
                Ok(_) => continue,
                Err(RecvError::Lagged(_)) => {
                    lagged = true;
                    deadline.get_or_insert_with(|| burst_from(tokio::time::Instant::now()));
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            let now = standing(&agent);
            let notifies = now.is_some() && known.get(&agent.id()) != now.as_ref();
            match (&mut deadline, notifies) {
                // Nothing to say and no burst to join: remembered at once, like a burst's end.
                (None, false) => remember(&mut known, &agent),
                (None, true) => {
                    deadline = Some(burst_from(tokio::time::Instant::now()));
                    changed.push(agent);
                }
                (Some((at, cap)), notifies) => {
                    if notifies {
                        *at = (tokio::time::Instant::now() + COALESCE).min(*cap);
                    }
                    changed.push(agent);
                }
            }
        }
        if lagged {
            // Missed changes: compare every agent that may need the user now; the others have
            // nothing to be notified for any more.
            match crate::reads::alerts(&runtime).await {
                Ok(found) => {
                    let now: HashSet<AgentId> = found.agents.iter().map(|a| a.id()).collect();
                    known.retain(|id, _| now.contains(id));
                    changed = found.agents;
                }
                Err(_) => return,
            }
        }
        // The latest snapshot of each agent wins.
        let mut after: Vec<AgentSnapshot> = Vec::new();
        for agent in changed.into_iter().rev() {
            if !after.iter().any(|a| a.id() == agent.id()) {
                after.push(agent);
            }
        }
        after.reverse();
        let note = plan_since(&known, &after, &settings, &state.watched());
        for agent in &after {
            let was = known.get(&agent.id());
            tracing::debug!(agent = %agent.id(), ?was, now = ?occurrence(agent), "burst");
            remember(&mut known, agent);
        }
        if let Some(note) = note {
            tracing::info!(summary = %note.summary, agents = note.agents.len(), "notifying");
            if let Err(error) = show(note).await {
                tracing::warn!(%error, "cannot show a desktop notification");
            }
        }
    }
}

/// What `agent` would be notified for now: nothing once it is archived.
fn standing(agent: &AgentSnapshot) -> Option<Occurrence> {
    occurrence(agent).filter(|_| !agent.record.is_archived())
}

/// Remembers what `agent` stands at as told, so the same occurrence is never sent again (or
/// forgets it, when there is nothing to tell).
fn remember(known: &mut HashMap<AgentId, Occurrence>, agent: &AgentSnapshot) {
    match standing(agent) {
        Some(now) => known.insert(agent.id(), now),
        None => known.remove(&agent.id()),
    };
}

type Changes = tokio::sync::mpsc::UnboundedReceiver<Result<Event, RecvError>>;

/// This machine's events and every connected host's agent changes as one stream; a host's
/// agent is named by its host ([`on_host`]), as the tray names it.
fn with_hosts(runtime: &Server) -> Changes {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let mut here = runtime.subscribe();
    let mut hosts = runtime.hosts().subscribe();
    tauri::async_runtime::spawn(async move {
        use paseo_core::hosts::HostEvent;
        loop {
            let next = tokio::select! {
                event = here.recv() => event,
                hosted = hosts.recv() => match hosted {
                    Ok(HostEvent::Event { host, event, .. }) => match *event {
                        Event::AgentUpdated { agent } => Ok(Event::AgentUpdated {
                            agent: Box::new(on_host(*agent, &host)),
                        }),
                        Event::AgentArchived { agent } => Ok(Event::AgentArchived {
                            agent: Box::new(on_host(*agent, &host)),
                        }),
                        _ => continue,
                    },
                    Ok(HostEvent::State { .. }) => continue,
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => Err(RecvError::Closed),
                },
            };
            let closed = matches!(next, Err(RecvError::Closed));
            if tx.send(next).is_err() || closed {
                return;
            }
        }
    });
    rx
}

async fn recv(rx: &mut Changes) -> Result<Event, RecvError> {
    rx.recv().await.unwrap_or(Err(RecvError::Closed))
}

/// A panic while holding one of these locks leaves plain data behind, still valid: keep going.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests;
