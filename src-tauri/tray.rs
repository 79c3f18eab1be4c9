//! The system tray: an icon whose variant shows the fleet's state, a first menu line with the
//! counts, one entry per agent that needs the user (click: show the window and open that agent),
//! Show/Hide window, and Quit.
//!
//! The menu model ([`TrayModel`]) is computed by pure functions from agent snapshots, so its
//! rules are tested without a display; [`Tray`] only renders it. The model is rebuilt from
//! runtime events, coalesced: at most one rebuild per [`COALESCE`], never one per timeline item.
//!
//! Which agents get an entry: those whose snapshot carries an alert the tray lists (the core's
//! one rule, `paseo_core::model::attention`: a pending permission or held start, an unseen error,
//! a root agent's unseen finish), most urgent first, newest first within a group, at most
//! [`MAX_ENTRIES`], then an "and N more" line. Each entry reads `glyph title — words`, e.g.
//! `◉ kid-2 — needs permission`. The first menu line is the fleet's counts line, the status
//! bar's (`FleetCounts::line`); the tray spells neither rule nor line itself.
//!
//! Opening the agent in the UI marks it seen, which removes the entry. The icon follows the same
//! order: the most urgent entry's colour (amber, red, green as in UI.md's status language), else
//! blue while any agent runs, else grey.

use crate::quit;
use paseo_core::model::{AgentId, Alert, FleetCounts};
use paseo_core::runtime::AgentSnapshot;
use paseo_core::server::Server;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tokio::sync::Notify;

pub const MAIN_WINDOW: &str = "main";
/// Sent to the main window when the user picks an agent in the tray: `{agentId}`. The UI opens
/// that agent's tab (and opening it marks it seen).
pub const OPEN_AGENT_EVENT: &str = "paseo://open-agent";
/// Agent entries shown at most; the rest are summed up in one "and N more" line.
pub const MAX_ENTRIES: usize = 10;
/// Minimum time between two rebuilds: a burst of events costs one rebuild.
pub const COALESCE: Duration = Duration::from_millis(200);

const ID_COUNTS: &str = "counts";
const ID_TOGGLE: &str = "toggle-window";
const ID_QUIT: &str = "quit";
const ID_MORE: &str = "more-agents";
const AGENT_PREFIX: &str = "agent:";

// ---------------------------------------------------------------------------------------------
// The model (pure)

/// The tray entry `agent` gets, if any: its alert, when the tray lists that kind.
pub fn entry_of(agent: &AgentSnapshot) -> Option<Alert> {
    agent.alert.filter(|alert| alert.in_tray())
}

/// Which icon the tray shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayState {
    Idle,
    Running,
    /// Something calls for the user; the most urgent alert picks the colour.
    Alert(Alert),
}

impl TrayState {
    fn icon(self) -> Image<'static> {
        match self {
            TrayState::Idle => tauri::include_image!("icons/tray-idle.png"),
            TrayState::Running => tauri::include_image!("icons/tray-running.png"),
            TrayState::Alert(Alert::Permission) => {
                tauri::include_image!("icons/tray-needs-input.png")
            }
            TrayState::Alert(Alert::Failed) => tauri::include_image!("icons/tray-failed.png"),
            TrayState::Alert(Alert::Finished | Alert::SubagentFinished) => {
                tauri::include_image!("icons/tray-finished.png")
            }
        }
    }
}

/// One agent in the menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub agent_id: AgentId,
    pub alert: Alert,
    /// What the user reads, e.g. `✕ lead — failed`.
    pub label: String,
}

/// Everything the tray shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayModel {
    pub state: TrayState,
    /// The first, disabled menu line, e.g. `1 running · 1 needs you · 4 total`.
    pub counts_line: String,
    pub tooltip: String,
    pub entries: Vec<Entry>,
    /// Agents that need the user but did not fit ([`MAX_ENTRIES`]).
    pub more: usize,
    /// The app itself needs the user: files of the data root cannot be written (SPEC 15).
    pub storage: Option<String>,
}

impl TrayModel {
    /// The model for a fleet with `counts` (the runtime's, over every agent) whose agents
    /// include `agents`. `agents` may hold any agents: those without an entry are skipped, so the
    /// updater passes only the candidates.
    pub fn of(counts: &FleetCounts, agents: &[AgentSnapshot]) -> TrayModel {
        let mut listed: Vec<(Alert, &AgentSnapshot)> = agents
            .iter()
            .filter_map(|agent| entry_of(agent).map(|why| (why, agent)))
            .collect();
        listed.sort_by(|(a_why, a), (b_why, b)| {
            let when =
                |s: &AgentSnapshot| s.record.attention_timestamp.unwrap_or(s.record.updated_at);
            a_why
                .cmp(b_why)
                .then_with(|| when(b).cmp(&when(a)))
                .then_with(|| a.id().cmp(&b.id()))
        });
        let state = match listed.first() {
            Some((why, _)) => TrayState::Alert(*why),
            None if counts.tally.running > 0 => TrayState::Running,
            None => TrayState::Idle,
        };
        let more = listed.len().saturating_sub(MAX_ENTRIES);
        let entries = listed
            .into_iter()
            .take(MAX_ENTRIES)
            .map(|(why, agent)| Entry {
                agent_id: agent.id(),
                alert: why,
                label: format!(
                    "{} {} — {}",
                    why.glyph(),
                    display_title(agent),
                    why.words(agent.pending_permission.as_ref())
                ),
            })
            .collect();
        let counts_line = counts.line();
        TrayModel {
            state,
            tooltip: format!("Paseo — {counts_line}"),
            counts_line,
            entries,
            more,
            storage: None,
        }
    }

    /// With the app's own problem first: the icon says failed unless a permission waits.
    pub fn with_storage(mut self, problem: Option<String>) -> TrayModel {
        if problem.is_some() && self.state != TrayState::Alert(Alert::Permission) {
            self.state = TrayState::Alert(Alert::Failed);
        }
        self.storage = problem;
        self
    }

    /// The model of an empty fleet (before the runtime answered).
    pub fn empty() -> TrayModel {
        TrayModel::of(&FleetCounts::default(), &[])
    }
}

// ---------------------------------------------------------------------------------------------
// The tray on screen

/// Position of the agents section in the menu (entries, "and N more", and a separator when
/// there is something to separate): after the counts line and its separator.
const SECTION_AT: usize = 2;

/// The tray and what it updates; managed by the app as `Tray<R>`.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    menu: Menu<R>,
    counts: MenuItem<R>,
    toggle: MenuItem<R>,
    /// How many menu lines the agents section has now.
    section_len: Mutex<usize>,
    shown: Mutex<TrayModel>,
    wake: Arc<Notify>,
    icon_dir: PathBuf,
}

/// Payload of [`OPEN_AGENT_EVENT`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenAgent {
    pub agent_id: AgentId,
}

pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Tray<R>> {
    let model = TrayModel::empty();
    let counts = MenuItem::with_id(app, ID_COUNTS, &model.counts_line, false, None::<&str>)?;
    let toggle = MenuItem::with_id(app, ID_TOGGLE, "Hide window", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, ID_QUIT, "Quit Paseo", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &counts,
            &PredefinedMenuItem::separator(app)?,
            &toggle,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let icon_dir = icon_dir();
    if let Some(base) = icon_dir.parent() {
        remove_dead_icon_dirs(base);
    }
    let icon = TrayIconBuilder::with_id("main")
        .icon(model.state.icon())
        .tooltip(&model.tooltip)
        // The library's default folder is shared by every process: two Paseo instances (other
        // data roots) would overwrite and delete each other's icon files.
        .temp_dir_path(&icon_dir)
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| on_menu_event(app, event.id().as_ref()))
        .build(app)?;
    Ok(Tray {
        icon,
        menu,
        counts,
        toggle,
        section_len: Mutex::new(0),
        shown: Mutex::new(model),
        wake: Arc::new(Notify::new()),
        icon_dir,
    })
}

/// Where the tray library writes the icon it hands to the panel: per process, in the user's
/// runtime folder when there is one.
fn icon_dir() -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    base.join(format!("paseo-tray-{}", std::process::id()))
}

/// Removes the icon folders of Paseo processes that no longer run: an app that was killed (a
/// crash, SIGKILL, a power cut) never removed its own, and each start would add one more.
fn remove_dead_icon_dirs(base: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("paseo-tray-"))
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid <= 0 || pid == std::process::id() as libc::pid_t || process_exists(pid) {
            continue;
        }
        // Only a folder of ours: a real folder (not a link someone planted), owned by this user.
        let path = entry.path();
        let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            // SAFETY: getuid(2) has no preconditions and cannot fail.
            m.is_dir() && m.uid() == unsafe { libc::getuid() }
        });
        if ours {
            match std::fs::remove_dir_all(&path) {
                Ok(()) => {
                    tracing::debug!(dir = %path.display(), "removed a killed app's tray icons")
                }
                Err(error) => {
                    tracing::debug!(%error, dir = %path.display(), "cannot remove a killed app's tray icons")
                }
            }
        }
    }
}

/// Whether a process with this id runs (or exists as a zombie). A process of another user counts
/// as running (EPERM): its folder is not ours to judge.
fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks the process.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

fn on_menu_event<R: Runtime>(app: &AppHandle<R>, id: &str) {
    match id {
        ID_TOGGLE => toggle_main_window(app),
        ID_QUIT => {
            tracing::info!("quit from the tray");
            quit::request(app);
        }
        ID_MORE => show_main_window(app),
        _ => match id.strip_prefix(AGENT_PREFIX).map(str::parse::<AgentId>) {
            Some(Ok(agent_id)) => open_agent(app, agent_id),
            Some(Err(error)) => tracing::warn!(%error, id, "tray entry with a bad agent id"),
            None => {}
        },
    }
}

/// Shows the main window and asks it to open `agent_id` (a tray entry, a notification click).
pub fn open_agent<R: Runtime>(app: &AppHandle<R>, agent_id: AgentId) {
    tracing::info!(agent = %agent_id, "opening an agent from the tray");
    show_main_window(app);
    if let Err(error) = app.emit_to(MAIN_WINDOW, OPEN_AGENT_EVENT, OpenAgent { agent_id }) {
        tracing::warn!(%error, "cannot ask the main window to open the agent");
    }
}

impl<R: Runtime> Tray<R> {
    /// Asks for a rebuild from the runtime's current state (cheap; bursts coalesce).
    pub fn refresh(&self) {
        self.wake.notify_one();
    }

    /// Renders `model`, touching only what changed. Runs on the main thread (the menu library's
    /// calls are then direct, never a round trip that could wait on a busy event loop).
    fn render(&self, model: TrayModel) -> tauri::Result<()> {
        let mut shown = lock(&self.shown);
        if *shown == model {
            return Ok(());
        }
        if shown.state != model.state {
            self.icon.set_icon(Some(model.state.icon()))?;
        }
        if shown.tooltip != model.tooltip {
            self.icon.set_tooltip(Some(&model.tooltip))?;
        }
        if shown.counts_line != model.counts_line {
            self.counts.set_text(&model.counts_line)?;
        }
        if (&shown.entries, shown.more, &shown.storage)
            != (&model.entries, model.more, &model.storage)
        {
            self.render_section(&model)?;
        }
        *shown = model;
        Ok(())
    }

    fn render_section(&self, model: &TrayModel) -> tauri::Result<()> {
        let app = self.menu.app_handle();
        let mut section_len = lock(&self.section_len);
        for _ in 0..*section_len {
            self.menu.remove_at(SECTION_AT)?;
        }
        *section_len = 0;
        let mut items: Vec<MenuItem<R>> = Vec::new();
        if let Some(problem) = &model.storage {
            let text = menu_text(&format!("✕ Paseo — {problem}"));
            items.push(MenuItem::with_id(app, ID_MORE, text, true, None::<&str>)?);
        }
        for entry in &model.entries {
            let id = format!("{AGENT_PREFIX}{}", entry.agent_id);
            items.push(MenuItem::with_id(
                app,
                id,
                menu_text(&entry.label),
                true,
                None::<&str>,
            )?);
        }
        if model.more > 0 {
            items.push(MenuItem::with_id(
                app,
                ID_MORE,
                more_label(model.more),
                true,
                None::<&str>,
            )?);
        }
        if items.is_empty() {
            return Ok(());
        }
        let separator = PredefinedMenuItem::separator(app)?;
        let mut lines: Vec<&dyn IsMenuItem<R>> = items.iter().map(|item| item as _).collect();
        lines.push(&separator);
        // One by one, so the count stays right even if an insert fails halfway.
        for line in lines {
            self.menu.insert(line, SECTION_AT + *section_len)?;
            *section_len += 1;
        }
        Ok(())
    }

    /// Keeps the Show/Hide item's wording in step with the window.
    pub fn set_window_visible(&self, visible: bool) -> tauri::Result<()> {
        self.toggle.set_text(if visible {
            "Hide window"
        } else {
            "Show window"
        })
    }

    /// Removes the folder of icon files handed to the panel (at exit).
    pub fn remove_icon_files(&self) {
        if let Err(error) = std::fs::remove_dir_all(&self.icon_dir) {
            if error.kind() != std::io::ErrorKind::NotFound {
                tracing::debug!(%error, dir = %self.icon_dir.display(), "tray icon folder left");
            }
        }
    }
}

/// Keeps the tray in step with the runtime: rebuilds the model whenever [`Tray::refresh`] was
/// called, at most once per [`COALESCE`], until the runtime stops. Starts with one rebuild.
pub fn spawn_updater<R: Runtime>(app: &AppHandle<R>, runtime: Server) {
    let Some(tray) = app.try_state::<Tray<R>>() else {
        return;
    };
    let wake = tray.wake.clone();
    wake.notify_one();
    // A connected host's change is the tray's news too (SPEC 17).
    let mut hosts = runtime.hosts().subscribe();
    let woken = wake.clone();
    tauri::async_runtime::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        while !matches!(hosts.recv().await, Err(RecvError::Closed)) {
            woken.notify_one();
        }
    });
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            wake.notified().await;
            let (counts, candidates, storage) = match crate::reads::alerts(&runtime).await {
                Ok(found) => {
                    // Every connected host's agents count, and alert named by their host.
                    let hosts = runtime.hosts();
                    let hosted = hosts
                        .alerts()
                        .into_iter()
                        .map(|(host, agent)| on_host(agent, &host));
                    let entries = found
                        .agents
                        .into_iter()
                        .chain(hosted)
                        .filter(|agent| entry_of(agent).is_some())
                        .collect::<Vec<_>>();
                    (hosts.counts_with(found.counts), entries, found.storage)
                }
                // The runtime stopped: the app is quitting.
                Err(_) => return,
            };
            let model = TrayModel::of(&counts, &candidates).with_storage(storage);
            let handle = app.clone();
            let posted = app.run_on_main_thread(move || {
                if let Some(tray) = handle.try_state::<Tray<R>>() {
                    if let Err(error) = tray.render(model) {
                        tracing::warn!(%error, "cannot update the tray");
                    }
                }
            });
            if posted.is_err() {
                return;
            }
            tokio::time::sleep(COALESCE).await;
        }
    });
}

/// Shows, unminimizes and focuses the main window (tray "Show", second launch, an agent entry).
pub fn show_main_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        let shown = window
            .show()
            .and_then(|_| window.unminimize())
            .and_then(|_| window.set_focus());
        if let Err(error) = shown {
            tracing::warn!(%error, "cannot show the main window");
        }
    }
    note_visibility(app, true);
}

pub fn hide_main_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        if let Err(error) = window.hide() {
            tracing::warn!(%error, "cannot hide the main window");
        }
    }
    if let Some(notifications) = app.try_state::<crate::notify::Notifications>() {
        notifications.blurred(MAIN_WINDOW);
    }
    note_visibility(app, false);
}

fn toggle_main_window<R: Runtime>(app: &AppHandle<R>) {
    let visible = app
        .get_webview_window(MAIN_WINDOW)
        .and_then(|window| window.is_visible().ok())
        .unwrap_or(false);
    if visible {
        hide_main_window(app);
    } else {
        show_main_window(app);
    }
}

fn note_visibility<R: Runtime>(app: &AppHandle<R>, visible: bool) {
    if let Some(tray) = app.try_state::<Tray<R>>() {
        if let Err(error) = tray.set_window_visible(visible) {
            tracing::warn!(%error, "cannot update the tray menu");
        }
    }
}

/// Asks the tray (if there is one) to catch up with the runtime.
pub fn refresh<R: Runtime>(app: &AppHandle<R>) {
    if let Some(tray) = app.try_state::<Tray<R>>() {
        tray.refresh();
    }
}

/// Whether a tray host (a StatusNotifier watcher: KDE, GNOME's AppIndicator extension, XFCE, …)
/// is on the session bus right now. Without one the tray icon is invisible, so hiding the window
/// would leave the user no way back: closing must quit instead. Asked at close time because
/// panels come and go.
#[cfg(target_os = "linux")]
pub fn host_available() -> bool {
    let ask = || -> zbus::Result<bool> {
        let connection = zbus::blocking::Connection::session()?;
        let proxy = zbus::blocking::fdo::DBusProxy::new(&connection)?;
        let name = zbus::names::BusName::try_from("org.kde.StatusNotifierWatcher")?;
        Ok(proxy.name_has_owner(name)?)
    };
    match ask() {
        Ok(present) => present,
        Err(error) => {
            tracing::debug!(%error, "no session bus to look for a tray host");
            false
        }
    }
}

/// Other platforms always have a notification area.
#[cfg(not(target_os = "linux"))]
pub fn host_available() -> bool {
    true
}

/// A panic while holding one of these locks leaves plain data behind, still valid: keep going.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

mod text;
pub use crate::names::{display_title, on_host, MAX_TITLE_CHARS};
use text::{menu_text, more_label};

#[cfg(test)]
pub(crate) mod tests;
