//! Each window comes back at the size and place the user left it (kept per window label in
//! `windows.json`, [`crate::windows::Layouts`]): noted as the window system reports moves and
//! resizes, written once they stop, and applied when the window opens again, its place only
//! where a screen still is.
//!
//! Not `tauri-plugin-window-state`, on purpose: it writes when a window closes or the app exits,
//! so a crash or a SIGKILL forgets where every window was, and it keeps one file in the app's
//! config folder, shared by every data root (`PASEO_HOME`). Here each move is written once it
//! stops, atomically, beside the window's layout in its data root, and forgotten with the window.

use crate::state::lock;
use crate::windows::{Geometry, Layouts};
use std::sync::Mutex;
use tauri::{AppHandle, Manager, Runtime};

/// Puts a window back where the user left it, if the data root remembers where.
pub fn restore<R: Runtime>(window: &tauri::WebviewWindow<R>) {
    let label = window.label().to_string();
    let app = window.app_handle();
    let Some(layouts) = app.try_state::<Layouts>() else {
        return;
    };
    if let Some(g) = layouts.geometry(&label) {
        let size = window.set_size(tauri::PhysicalSize::new(g.width, g.height));
        // Its place only where the user can still reach it (a screen unplugged since).
        let screens: Vec<Geometry> = window
            .available_monitors()
            .unwrap_or_default()
            .iter()
            .map(|m| Geometry {
                x: m.position().x,
                y: m.position().y,
                width: m.size().width,
                height: m.size().height,
            })
            .collect();
        let place = if screens.is_empty() || g.on_a_screen(&screens) {
            window.set_position(tauri::PhysicalPosition::new(g.x, g.y))
        } else {
            tracing::info!(%label, ?g, ?screens, "the window's place is on no screen now: the window system places it");
            Ok(())
        };
        if let Err(error) = size.and(place) {
            tracing::warn!(%label, %error, "cannot restore the window's size and place");
        } else {
            tracing::info!(%label, ?g, "window size and place restored");
        }
    }
    if let Some(state) = app.try_state::<GeometryWatch>() {
        lock(&state.restored).insert(label);
    }
    note_now(window);
}

/// Which windows have had their geometry restored: until then, the size a window is born
/// with is not the user's and is not noted.
#[derive(Default)]
pub struct GeometryWatch {
    restored: Mutex<std::collections::BTreeSet<String>>,
    generation: std::sync::atomic::AtomicU64,
}

/// A window moved or was resized: note it, and write once the events have stopped for a moment.
pub fn watch<R: Runtime>(window: &tauri::Window<R>, event: &tauri::WindowEvent) {
    let update: Box<dyn FnOnce(&mut Geometry) + Send> = match *event {
        tauri::WindowEvent::Moved(p) => Box::new(move |g| {
            g.x = p.x;
            g.y = p.y;
        }),
        tauri::WindowEvent::Resized(s) if s.width > 0 && s.height > 0 => Box::new(move |g| {
            g.width = s.width;
            g.height = s.height;
        }),
        _ => return,
    };
    if window.is_minimized().unwrap_or(false) {
        return;
    }
    note(window.app_handle(), window.label(), update);
}

/// Where a window is right after it was put back: noted even if the window system sends no
/// event for it, so the file always says where each open window is.
fn note_now<R: Runtime>(window: &tauri::WebviewWindow<R>) {
    let (Ok(size), Ok(place)) = (window.inner_size(), window.outer_position()) else {
        return;
    };
    note(
        window.app_handle(),
        window.label(),
        Box::new(move |g| {
            *g = Geometry {
                x: place.x,
                y: place.y,
                width: size.width,
                height: size.height,
            }
        }),
    );
}

fn note<R: Runtime>(
    app: &AppHandle<R>,
    label: &str,
    update: Box<dyn FnOnce(&mut Geometry) + Send>,
) {
    let (Some(watch), Some(layouts)) =
        (app.try_state::<GeometryWatch>(), app.try_state::<Layouts>())
    else {
        return;
    };
    if !lock(&watch.restored).contains(label) || !layouts.note_geometry(label, update) {
        return;
    }
    use std::sync::atomic::Ordering;
    let mine = watch.generation.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let (Some(watch), Some(layouts)) =
            (app.try_state::<GeometryWatch>(), app.try_state::<Layouts>())
        else {
            return;
        };
        if watch.generation.load(Ordering::SeqCst) == mine {
            if let Err(error) = layouts.save_geometry() {
                tracing::warn!(%error, "cannot keep the windows' size and place");
            }
        }
    });
}
