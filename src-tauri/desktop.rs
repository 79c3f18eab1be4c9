//! Window mode: the Tauri app with the main window, the tray and single instance.

use crate::notify::Notifications;
use crate::quit;
use crate::state::AppState;
use crate::tray::{self, Tray, MAIN_WINDOW};
use paseo_headless::backend;
use paseo_headless::cli::Mode;
use paseo_headless::headless::StopSignals;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tauri::plugin::TauriPlugin;
use tauri::{Emitter, Manager, RunEvent, Runtime, WebviewWindowBuilder, WindowEvent};

/// Runs the desktop app until it quits; returns the process exit code.
pub fn run(data_root: PathBuf) -> ExitCode {
    // Listen before taking the root (see paseo_headless::headless): a stop signal once the lock
    // file names us quits the event loop, whose exit path shuts the backend down.
    let signals = tauri::async_runtime::block_on(async { StopSignals::install() });
    // Claimed before Tauri and GTK start (≈ 100 ms on one core), so the records are read on the
    // other meanwhile (docs/benchmarks.md). A root another process holds is not claimed here:
    // single instance below hands over to it, or the backend plugin says who holds it.
    let claim = signals
        .as_ref()
        .ok()
        .and_then(|_| backend::claim_beside_window(&data_root).ok());
    let context = tauri::generate_context!("tauri.conf.json");
    let builder = tauri::Builder::default().plugin(
        // Registered first: a second launch on the same data root hands over to the first one
        // here and exits 0, before it could touch the root (whose lock would refuse it).
        tauri_plugin_single_instance::Builder::new()
            .dbus_id(single_instance_id(&data_root))
            .callback(|app, argv, _cwd| {
                tracing::info!(
                    ?argv,
                    "another launch on this data root: focusing the window"
                );
                tray::show_main_window(app);
            })
            .build(),
    );
    let refusal = Arc::new(Mutex::new(None));
    let app = crate::app::configure(builder, AppState::new(data_root, Mode::Window))
        .plugin(backend_plugin(refusal.clone(), signals, claim))
        .plugin(crate::native::plugin())
        .manage(crate::geometry::GeometryWatch::default())
        .setup(|app| {
            setup(app.handle());
            Ok(())
        })
        .on_window_event(on_window_event)
        .build(context);
    let app = match app {
        Ok(app) => app,
        Err(error) => {
            // Prefer the backend's own words ("the data root … is in use … (pid N)") over
            // Tauri's plugin-initialisation wrapper.
            let taken = refusal.lock().ok().and_then(|mut refused| refused.take());
            eprintln!(
                "paseo-desktop: {}",
                taken.unwrap_or_else(|| error.to_string())
            );
            // A failed `build` leaves GTK/WebKit threads and the async runtime running; returning
            // through `main` runs exit-time destructors underneath them, which crashed a refused
            // launch with SIGSEGV under load (CI). Nothing is owned yet (the root was refused), so
            // leave at once with the refusal's status.
            use std::io::Write;
            let _ = std::io::stderr().flush();
            // SAFETY: `_exit` ends the process without running any handler; nothing needs one.
            unsafe { libc::_exit(1) }
        }
    };
    // Every way out (Quit, a stop signal, the last window closed) ends the event loop and passes
    // here: the one place agents are stopped and records persisted before the root is released.
    let code = app.run_return(|app, event| {
        if let RunEvent::Exit = event {
            let state = app.state::<AppState>();
            // Quit while the records load: the start ends first, then stops in order.
            tauri::async_runtime::block_on(state.runtime_started());
            if let Some(backend) = state.take_backend() {
                tauri::async_runtime::block_on(backend.shutdown());
            }
            if let Some(tray) = app.try_state::<Tray<tauri::Wry>>() {
                tray.remove_icon_files();
            }
        }
    });
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Starts the backend as a plugin: plugins initialise inside `Builder::build` in registration
/// order, so this runs after single instance had its say and before anything is shown, and a
/// refusal (data root in use, MCP port taken) makes `build` fail cleanly. (The setup hook runs
/// later, inside the event loop on Linux, where an error can only panic.) Only the quick part
/// runs here: the records load on a thread of their own while the window opens (SPEC 7: the
/// window's start is the time to its first screen), and its first snapshot waits for them.
fn backend_plugin<R: Runtime>(
    refusal: Arc<Mutex<Option<String>>>,
    signals: std::io::Result<StopSignals>,
    claim: Option<backend::Claim>,
) -> TauriPlugin<R> {
    tauri::plugin::Builder::new("paseo-backend")
        .setup(move |app, _api| {
            let mut signals = signals?;
            let handle = app.clone();
            tauri::async_runtime::spawn(async move {
                let signal = signals.recv().await;
                tracing::info!(signal, "stop signal: quitting");
                handle.exit(0);
            });
            let state = app.state::<AppState>();
            let root = state.data_root().to_path_buf();
            let prepared = match tauri::async_runtime::block_on(async {
                match claim {
                    Some(claimed) => claimed.prepare(Mode::Window),
                    None => backend::prepare(&root, Mode::Window),
                }
            }) {
                Ok(prepared) => prepared,
                Err(error) => {
                    if let Ok(mut refused) = refusal.lock() {
                        *refused = Some(error.to_string());
                    }
                    return Err(error.into());
                }
            };
            state.backend_starting();
            let app = app.clone();
            std::thread::Builder::new()
                .name("paseo-load".into())
                .spawn(move || load_backend(&app, prepared))?;
            Ok(())
        })
        .build()
}

/// Loads the records and hands the running backend to the app; a start that fails ends the app
/// with its error, as a refused one does.
fn load_backend<R: Runtime>(app: &tauri::AppHandle<R>, prepared: backend::Prepared) {
    let state = app.state::<AppState>();
    match tauri::async_runtime::block_on(prepared.load()) {
        Ok(started) => {
            // Subscribed before any window can have its snapshot: none misses an event after it.
            forward_events(app, started.handle());
            forward_host_events(app, started.handle());
            state.attach_backend(started);
        }
        Err(error) => {
            tracing::error!(%error, "the backend could not start; quitting");
            eprintln!("paseo-desktop: {error}");
            state.backend_failed();
            app.exit(1);
        }
    }
}

/// Forwards every runtime event to every window, numbered (`paseo://event`, `Numbered`), and
/// asks the tray to catch up when an agent or the counts changed (the tray coalesces; timeline
/// items never reach it). Events the windows fell behind on are said to be missed, with the
/// number they reach: a window then takes this machine's snapshot again (ui/sync.js).
fn forward_events<R: Runtime>(app: &tauri::AppHandle<R>, rt: paseo_core::server::Server) {
    use paseo_core::runtime::window::{Numbered, EVENT};
    // Subscribed here, before any window can have its snapshot: none misses an event after it.
    let (mut rx, mut seq) = match tauri::async_runtime::block_on(rt.subscribe_numbered()) {
        Ok(subscribed) => subscribed,
        Err(error) => {
            tracing::error!(%error, "cannot follow the backend's events; the windows will not update");
            return;
        }
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(event) => {
                    use paseo_core::runtime::Event;
                    seq += 1;
                    match &event {
                        Event::CountsChanged { .. }
                        | Event::AgentUpdated { .. }
                        | Event::AgentArchived { .. } => {
                            tray::refresh(&app);
                        }
                        _ => {}
                    }
                    // A window holds an agent as its card, the snapshot's shape.
                    if let Err(error) = app.emit(EVENT, Numbered::event(None, seq, &event)) {
                        tracing::warn!(%error, "cannot forward an event to the windows");
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    seq += n;
                    tracing::warn!(
                        missed = n,
                        "windows fell behind; they take the snapshot again"
                    );
                    let _ = app.emit(EVENT, Numbered::missed(seq, n));
                    tray::refresh(&app);
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}

/// Forwards every host's events and states to every window (`paseo://event` tagged with the
/// host, `paseo://host-state`, SPEC 17), in the shapes `paseo_core::hosts::window` defines.
/// Windows that fell behind are told every host's state again, so each takes the host's
/// snapshot anew.
fn forward_host_events<R: Runtime>(app: &tauri::AppHandle<R>, rt: paseo_core::server::Server) {
    use tokio::sync::broadcast::error::RecvError;
    let app = app.clone();
    let mut rx = rt.hosts().subscribe();
    tauri::async_runtime::spawn(async move {
        loop {
            let events = match rx.recv().await {
                Ok(event) => vec![event],
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "windows fell behind a host; resyncing them");
                    rt.hosts().states()
                }
                Err(RecvError::Closed) => return,
            };
            for event in &events {
                let (name, payload) = event.for_window();
                if let Err(error) = app.emit(name, payload) {
                    tracing::warn!(%error, "cannot forward a host's event to the windows");
                }
            }
        }
    });
}

/// Starts the tray and the main window once the backend owns the data root (its records may
/// still be loading: what follows the runtime starts once it runs).
fn setup<R: Runtime>(app: &tauri::AppHandle<R>) {
    match tray::build(app) {
        Ok(built) => {
            app.manage::<Tray<R>>(built);
        }
        // The app stays usable without a tray; closing the window then quits.
        Err(error) => tracing::warn!(%error, "no tray icon"),
    }

    if let Err(error) = open_main_window(app) {
        tracing::error!(%error, "cannot open the main window; quitting");
        eprintln!("paseo-desktop: cannot open the main window: {error}");
        app.exit(1);
        return;
    }
    crate::extra::restore_extra(app);

    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let Some(runtime) = app.state::<AppState>().runtime_started().await else {
            return;
        };
        if app.try_state::<Tray<R>>().is_some() {
            tray::spawn_updater(&app, runtime.clone());
        }
        crate::notify::spawn(&app, runtime, tray::open_agent);
    });
}

fn open_main_window<R: Runtime>(
    app: &tauri::AppHandle<R>,
) -> Result<(), Box<dyn std::error::Error>> {
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|window| window.label == MAIN_WINDOW)
        .ok_or("tauri.conf.json has no window labelled 'main'")?
        .clone();
    let window = WebviewWindowBuilder::from_config(app, &config)?.build()?;
    crate::geometry::restore(&window);
    tracing::info!("main window open");
    Ok(())
}

fn on_window_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    crate::geometry::watch(window, event);
    // What the page reports of its focus can be late; the window system's word is not.
    match event {
        WindowEvent::Focused(false) => {
            if let Some(n) = window.app_handle().try_state::<Notifications>() {
                n.blurred(window.label());
            }
        }
        WindowEvent::Destroyed => {
            if let Some(n) = window.app_handle().try_state::<Notifications>() {
                n.forget(window.label());
            }
            // A closed window shows nothing: its agent may make room again.
            let app = window.app_handle();
            if let Some(rt) = app.try_state::<AppState>().and_then(|s| s.runtime()) {
                let label = window.label().to_string();
                tauri::async_runtime::spawn(async move {
                    let _ = crate::reads::shown(&rt, &label, None).await;
                });
            }
        }
        _ => {}
    }
    if let WindowEvent::CloseRequested { api, .. } = event {
        if window.label() != MAIN_WINDOW {
            // Extra windows simply close, and do not come back at the next launch.
            crate::extra::closed_by_user(window.app_handle(), window.label());
            return;
        }
        let app = window.app_handle();
        if app.try_state::<Tray<R>>().is_some() && tray::host_available() {
            api.prevent_close();
            tray::hide_main_window(app);
            tracing::info!("main window hidden to the tray");
        } else if app.webview_windows().len() > 1 {
            tracing::info!("main window closed with no tray host; other windows stay open");
        } else {
            // Closing the last window quits: the same gesture as the tray's Quit, so the same
            // confirm when agents are running (Cancel keeps the window).
            api.prevent_close();
            tracing::info!("main window closed with no tray host: quitting");
            quit::request(app);
        }
    }
}

/// A D-Bus name element unique to the data root, so single instance means "one app per data
/// root" (the same rule as the lock) rather than one per user.
fn single_instance_id(data_root: &Path) -> String {
    // FNV-1a: stable across builds and processes, unlike std's hasher.
    let hash = data_root
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("dev.paseo.desktop.root_{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_instance_id_is_a_valid_bus_name_per_root() {
        let a = single_instance_id(Path::new("/home/me/.paseo"));
        let b = single_instance_id(Path::new("/tmp/other"));
        assert_ne!(a, b);
        assert_eq!(a, single_instance_id(Path::new("/home/me/.paseo")));
        assert!(a
            .split('.')
            .all(|part| !part.is_empty() && !part.starts_with(|c: char| c.is_ascii_digit())));
    }
}
