//! The app's hosts (SPEC 17): one [`HostClient`] per configured host, started with the backend,
//! its connection state, a mirror of its fleet (which agents it holds, their status, its
//! counts) kept from the client's snapshot and events, and those events handed on to local
//! listeners tagged with the host's name. A dropped connection stops nothing on the host: the
//! client reconnects and resyncs, and the mirror is rebuilt from the new snapshot.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::client::{HostClient, Update};
use super::ssh::{Host, SshOptions};
use super::HostError;
use crate::api::{ApiError, Event};
pub use crate::api::{HostState, HostStatus};
use crate::model::{AgentId, FleetCounts, Status, WorkspaceId};
use crate::runtime::AgentSnapshot;

/// Waits between attempts while a host cannot be reached at all (the client's own backoff
/// takes over once it has connected): short, so a host that comes up is found within seconds.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MAX: Duration = Duration::from_secs(10);

/// What local listeners hear of the hosts (the windows as `paseo://host-event` and
/// `paseo://host-state`, [`super::window`]).
#[derive(Clone, Debug)]
pub enum HostEvent {
    /// A host's event, tagged with its name and numbered as the host numbers it: the same
    /// numbers as the `seq` of its `syncSnapshot`, so a window applies only those after it.
    Event {
        host: String,
        seq: u64,
        event: Box<Event>,
    },
    /// A host's state changed, or its mirror was rebuilt from a new snapshot (a reconnect, a
    /// resync): a window then takes the host's snapshot again.
    State { host: String, state: HostState },
}

/// An agent a host holds, as mirrored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mirrored {
    pub status: String,
    pub archived: bool,
}

#[derive(Default)]
struct Mirror {
    agents: HashMap<AgentId, Mirrored>,
    /// The workspaces it holds, so a request naming one goes there. Never forgotten while the
    /// app runs (an archived one still belongs to the host: its restore must go there).
    workspaces: HashSet<WorkspaceId>,
    counts: FleetCounts,
    /// The agents that alert the user (`model::attention`), as their last events said: the
    /// tray's entries and the desktop notifications of this host.
    alerting: HashMap<AgentId, AgentSnapshot>,
}

impl Mirror {
    /// Rebuilt from a window snapshot (runtime/window.rs: one card per unarchived agent).
    /// Archived agents seen before stay known, so a restore still finds its host.
    fn reset(&mut self, window: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Card {
            id: AgentId,
            status: Status,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Workspace {
            workspace_id: WorkspaceId,
        }
        #[derive(Deserialize)]
        struct Snapshot {
            agents: Vec<Card>,
            #[serde(default)]
            workspaces: Vec<Workspace>,
            counts: FleetCounts,
        }
        let snap: Snapshot =
            serde_json::from_str(window).map_err(|e| format!("unreadable snapshot: {e}"))?;
        let mut agents: HashMap<AgentId, Mirrored> =
            self.agents.drain().filter(|(_, a)| a.archived).collect();
        for card in snap.agents {
            agents.insert(
                card.id,
                Mirrored {
                    status: card.status.as_str().to_string(),
                    archived: false,
                },
            );
        }
        self.alerting
            .retain(|id, _| agents.get(id).is_some_and(|a| !a.archived));
        self.agents = agents;
        self.counts = snap.counts;
        self.workspaces
            .extend(snap.workspaces.into_iter().map(|w| w.workspace_id));
        Ok(())
    }

    fn apply(&mut self, event: &Event) {
        match event {
            Event::AgentUpdated { agent } | Event::AgentArchived { agent } => {
                let archived = matches!(event, Event::AgentArchived { .. });
                if let Some(ws) = &agent.record.workspace_id {
                    self.workspaces.insert(ws.clone());
                }
                if agent.alert.is_some() && !archived {
                    self.alerting.insert(agent.id(), (**agent).clone());
                } else {
                    self.alerting.remove(&agent.id());
                }
                self.agents.insert(
                    agent.id(),
                    Mirrored {
                        status: agent.status.as_str().to_string(),
                        archived,
                    },
                );
            }
            Event::CountsChanged { counts } => self.counts = *counts,
            Event::WorkspaceUpdated { workspace } => {
                self.workspaces
                    .insert(workspace.record.workspace_id.clone());
            }
            _ => {}
        }
    }
}

/// One configured host: its client once connected, its state and mirror, and the task that
/// keeps them.
struct Slot {
    host: Host,
    state: Mutex<HostState>,
    mirror: Mutex<Mirror>,
    client: Mutex<Option<Arc<HostClient>>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// Every configured host of this app. Cheap to share; lives in the runtime's handle so every
/// client of the API (the window, the MCP server) reaches the same hosts.
pub struct HostManager {
    paseo_home: PathBuf,
    opts: Mutex<SshOptions>,
    slots: Mutex<Vec<Arc<Slot>>>,
    events: broadcast::Sender<HostEvent>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl HostManager {
    pub fn new(paseo_home: &Path) -> HostManager {
        HostManager {
            paseo_home: paseo_home.to_path_buf(),
            opts: Mutex::new(SshOptions::default()),
            slots: Mutex::new(Vec::new()),
            events: broadcast::channel(4096).0,
        }
    }

    /// Connects to every host of config.json (the backend's start); each keeps trying until it
    /// connects, then its client keeps the connection up.
    pub fn start(self: &Arc<Self>, hosts: &[Host], opts: SshOptions) {
        *lock(&self.opts) = opts;
        for host in hosts {
            self.open(host.clone());
        }
    }

    /// The ssh the app runs: the system `ssh`; `PASEO_SSH_CONFIG` names an ssh config file used
    /// instead of `~/.ssh/config` (`ssh -F`), for a separate set-up and the tests.
    pub fn ssh_options_from_env() -> SshOptions {
        let mut opts = SshOptions::default();
        if let Some(file) = std::env::var_os("PASEO_SSH_CONFIG").filter(|f| !f.is_empty()) {
            opts.extra = vec!["-F".into(), file.to_string_lossy().into_owned()];
        }
        opts
    }

    pub fn subscribe(&self) -> broadcast::Receiver<HostEvent> {
        self.events.subscribe()
    }

    fn open(self: &Arc<Self>, host: Host) {
        // Said at once: a window hearing of a host it does not list yet fetches the list again
        // (an added host shows while its first attempt runs).
        let _ = self.events.send(HostEvent::State {
            host: host.name.clone(),
            state: HostState::Connecting,
        });
        let slot = Arc::new(Slot {
            host,
            state: Mutex::new(HostState::Connecting),
            mirror: Mutex::default(),
            client: Mutex::new(None),
            task: Mutex::new(None),
        });
        let task = tokio::spawn(keep(
            slot.clone(),
            lock(&self.opts).clone(),
            self.events.clone(),
        ));
        *lock(&slot.task) = Some(task);
        lock(&self.slots).push(slot);
    }

    fn slot(&self, name: &str) -> Option<Arc<Slot>> {
        lock(&self.slots)
            .iter()
            .find(|s| s.host.name == name)
            .cloned()
    }

    /// The configured hosts' names, in config order.
    pub fn names(&self) -> Vec<String> {
        lock(&self.slots)
            .iter()
            .map(|s| s.host.name.clone())
            .collect()
    }

    pub fn is_configured(&self, name: &str) -> bool {
        self.slot(name).is_some()
    }

    /// Every host with its state and numbers.
    pub fn list(&self) -> Vec<HostStatus> {
        lock(&self.slots)
            .iter()
            .map(|s| {
                let mirror = lock(&s.mirror);
                HostStatus {
                    host: s.host.clone(),
                    state: lock(&s.state).clone(),
                    agents: mirror.agents.values().filter(|a| !a.archived).count(),
                    counts: mirror.counts,
                }
            })
            .collect()
    }

    /// The host holding `id`, if one does (by its mirror).
    pub fn holder(&self, id: AgentId) -> Option<String> {
        lock(&self.slots)
            .iter()
            .find(|s| lock(&s.mirror).agents.contains_key(&id))
            .map(|s| s.host.name.clone())
    }

    /// The host holding the workspace `id`, if one does (by its mirror).
    pub fn workspace_holder(&self, id: &WorkspaceId) -> Option<String> {
        lock(&self.slots)
            .iter()
            .find(|s| lock(&s.mirror).workspaces.contains(id))
            .map(|s| s.host.name.clone())
    }

    /// Notes a workspace a host answered with (added, made, renamed) before its event arrives.
    pub fn note_workspace(&self, host: &str, id: &WorkspaceId) {
        if let Some(slot) = self.slot(host) {
            lock(&slot.mirror).workspaces.insert(id.clone());
        }
    }

    /// Every host's state as it is now, as the events that said it: what a window that fell
    /// behind is told, so it takes each host's snapshot again.
    pub fn states(&self) -> Vec<HostEvent> {
        lock(&self.slots)
            .iter()
            .map(|s| HostEvent::State {
                host: s.host.name.clone(),
                state: lock(&s.state).clone(),
            })
            .collect()
    }

    /// Notes an agent a host answered with (created, listed) before its event arrives, so
    /// the next request for it finds its host.
    pub fn note(&self, host: &str, agent: &AgentSnapshot) {
        if let Some(slot) = self.slot(host) {
            let mut mirror = lock(&slot.mirror);
            if let Some(ws) = &agent.record.workspace_id {
                mirror.workspaces.insert(ws.clone());
            }
            mirror.agents.insert(
                agent.id(),
                Mirrored {
                    status: agent.status.as_str().to_string(),
                    archived: agent.record.is_archived(),
                },
            );
        }
    }

    /// A host's mirrored agent.
    pub fn mirrored(&self, host: &str, id: AgentId) -> Option<Mirrored> {
        self.slot(host)
            .and_then(|s| lock(&s.mirror).agents.get(&id).cloned())
    }

    /// The counts of every connected host, with its name (the tray and notifications).
    pub fn connected_counts(&self) -> Vec<(String, FleetCounts)> {
        lock(&self.slots)
            .iter()
            .filter(|s| *lock(&s.state) == HostState::Connected)
            .map(|s| (s.host.name.clone(), lock(&s.mirror).counts))
            .collect()
    }

    /// `local` (this machine's counts) with every connected host's added: the tray's line.
    pub fn counts_with(&self, local: FleetCounts) -> FleetCounts {
        self.connected_counts()
            .into_iter()
            .fold(local, |all, (_, counts)| all.plus(counts))
    }

    /// The agents of connected hosts that alert the user, with their host's name.
    pub fn alerts(&self) -> Vec<(String, AgentSnapshot)> {
        lock(&self.slots)
            .iter()
            .filter(|s| *lock(&s.state) == HostState::Connected)
            .flat_map(|s| {
                let mirror = lock(&s.mirror);
                mirror
                    .alerting
                    .values()
                    .map(|a| (s.host.name.clone(), a.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The named host's client while connected, else `disconnected` (or `not_found`).
    pub fn client(&self, name: &str) -> Result<Arc<HostClient>, ApiError> {
        let slot = self.slot(name).ok_or_else(|| unknown(name))?;
        let client = lock(&slot.client).clone();
        client.ok_or_else(|| {
            ApiError::new("disconnected", format!("the host {name} is not connected"))
        })
    }

    /// Adds a host to config.json and connects to it.
    pub fn add(self: &Arc<Self>, host: Host) -> Result<(), ApiError> {
        crate::config::check_host(&host).map_err(|(field, message)| ApiError {
            code: "invalid".into(),
            message: format!("host.{field}: {message}"),
            field: Some(format!("host.{field}")),
        })?;
        if self.is_configured(&host.name) {
            return Err(ApiError {
                code: "conflict".into(),
                message: format!("host.name: a host named {:?} exists already", host.name),
                field: Some("host.name".into()),
            });
        }
        let mut hosts: Vec<Host> = lock(&self.slots).iter().map(|s| s.host.clone()).collect();
        hosts.push(host.clone());
        crate::config::write_hosts(&self.paseo_home, &hosts)
            .map_err(|e| ApiError::new("config", e.to_string()))?;
        self.open(host);
        Ok(())
    }

    /// Removes a host from config.json and ends its connection; nothing on the host stops.
    pub fn remove(&self, name: &str) -> Result<(), ApiError> {
        let slot = self.slot(name).ok_or_else(|| unknown(name))?;
        let hosts: Vec<Host> = lock(&self.slots)
            .iter()
            .filter(|s| s.host.name != name)
            .map(|s| s.host.clone())
            .collect();
        crate::config::write_hosts(&self.paseo_home, &hosts)
            .map_err(|e| ApiError::new("config", e.to_string()))?;
        lock(&self.slots).retain(|s| !Arc::ptr_eq(s, &slot));
        if let Some(task) = lock(&slot.task).take() {
            task.abort();
        }
        lock(&slot.client).take();
        Ok(())
    }

    /// Copies this app's `paseo-headless` (the binary beside this one) to the host, then
    /// connects again at once.
    pub async fn install(self: &Arc<Self>, name: &str) -> Result<(), ApiError> {
        let slot = self.slot(name).ok_or_else(|| unknown(name))?;
        let binary = own_headless()?;
        let opts = lock(&self.opts).clone();
        super::install(&slot.host, &opts, &binary).await?;
        // A host that never connected tries again now; a connected one keeps its client (its
        // backend runs the old binary until it is restarted).
        if !matches!(
            *lock(&slot.state),
            HostState::Connected | HostState::Disconnected { .. }
        ) {
            let host = slot.host.clone();
            lock(&self.slots).retain(|s| !Arc::ptr_eq(s, &slot));
            if let Some(task) = lock(&slot.task).take() {
                task.abort();
            }
            self.open(host);
        }
        Ok(())
    }
}

fn unknown(name: &str) -> ApiError {
    ApiError {
        code: "invalid".into(),
        message: format!("host: no host is named {name:?} in config.json"),
        field: Some("host".into()),
    }
}

/// This app's `paseo-headless`: this program when it is it, else the one beside it (the
/// desktop app's package installs both in one folder).
fn own_headless() -> Result<PathBuf, ApiError> {
    let me = std::env::current_exe()
        .map_err(|e| ApiError::new("install", format!("cannot find this program: {e}")))?;
    if me.file_name().is_some_and(|n| n == "paseo-headless") {
        return Ok(me);
    }
    let beside = me.with_file_name("paseo-headless");
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(ApiError::new(
            "install",
            format!(
                "this app has no paseo-headless beside it ({})",
                beside.display()
            ),
        ))
    }
}

/// Keeps one host: connects (retrying with backoff while it cannot), then follows its client's
/// updates for as long as the app runs.
async fn keep(slot: Arc<Slot>, opts: SshOptions, events: broadcast::Sender<HostEvent>) {
    let name = slot.host.name.clone();
    let set_state = |state: HostState| {
        *lock(&slot.state) = state.clone();
        let _ = events.send(HostEvent::State {
            host: name.clone(),
            state,
        });
    };
    let mut wait = RETRY_FIRST;
    let (client, mut updates) = loop {
        match HostClient::connect(slot.host.clone(), opts.clone()).await {
            Ok(connected) => break connected,
            Err(error) => {
                tracing::warn!(host = %name, %error, "cannot connect to the host");
                set_state(failed(&error));
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(RETRY_MAX);
            }
        }
    };
    *lock(&slot.client) = Some(Arc::new(client));
    while let Some(update) = updates.recv().await {
        match update {
            Update::Synced { window, .. } => {
                if let Err(error) = lock(&slot.mirror).reset(&window) {
                    tracing::warn!(host = %name, %error, "the host's snapshot cannot be mirrored");
                }
                set_state(HostState::Connected);
            }
            Update::Event { seq, event } => {
                lock(&slot.mirror).apply(&event);
                let _ = events.send(HostEvent::Event {
                    host: name.clone(),
                    seq,
                    event,
                });
            }
            Update::Disconnected { error, since } => set_state(HostState::Disconnected {
                last_seen: since,
                error,
            }),
        }
    }
}

fn failed(error: &HostError) -> HostState {
    HostState::Failed {
        code: error.code().to_string(),
        error: error.to_string(),
        install_helps: error.install_helps(),
    }
}

impl crate::api::Hosts for Arc<HostManager> {
    fn list(&self) -> Vec<HostStatus> {
        HostManager::list(self)
    }

    fn add(&self, host: Host) -> Result<(), ApiError> {
        HostManager::add(self, host)
    }

    fn remove(&self, name: &str) -> Result<(), ApiError> {
        HostManager::remove(self, name)
    }

    fn install<'a>(
        &'a self,
        name: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + 'a>>
    {
        Box::pin(HostManager::install(self, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_reads_a_window_snapshot_and_follows_events() {
        let a = AgentId::new();
        let b = AgentId::new();
        let window = serde_json::json!({
            "agents": [{"id": a, "status": "idle"}, {"id": b, "status": "running"}],
            "counts": FleetCounts::default(),
        })
        .to_string();
        let mut m = Mirror::default();
        m.reset(&window).unwrap();
        assert_eq!(m.agents[&a].status, "idle");
        assert_eq!(m.agents[&b].status, "running");
        assert!(m.reset("{").is_err());
    }
}
