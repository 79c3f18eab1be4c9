//! Client windows. Each window is one client with its own tab layout (SPEC 7): the UI hands its
//! layout over as opaque JSON, kept per window label in `$PASEO_HOME/windows.json` (written
//! atomically) and handed back when that window starts again. "New window" opens another client
//! (`window-N`); the extra windows that were open at quit come back at the next launch, and
//! every window comes back at the size and place the user left it (`geometry`).

use crate::state::lock;
use paseo_core::store::atomic::{write_atomic, TEMP_PREFIX};
use paseo_core::store::{quarantine, Layout};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Labels of the windows "New window" opens (the capability grants `window-*`).
pub const EXTRA_PREFIX: &str = "window-";
/// A layout is a few tab lists; anything this large is not one.
pub const MAX_LAYOUT_BYTES: usize = 256 * 1024;
const FILE: &str = "windows.json";

#[derive(Debug, thiserror::Error)]
pub enum WindowsError {
    #[error("layout: {0}")]
    InvalidLayout(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot open a window: {0}")]
    Open(String),
}

/// What `windows.json` holds. `geometry` came later: a file without it loads as before.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    windows: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    geometry: BTreeMap<String, Geometry>,
}

/// A window's place and inner size on screen, in physical pixels, as the window system last
/// reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Geometry {
    /// Whether it can be a real window: a size within reason (not a minimised or hidden
    /// window's 0×0) and a place not lost far off every screen.
    pub fn plausible(&self) -> bool {
        const MAX: u32 = 16_384;
        let near = |v: i32| (-(MAX as i32)..=MAX as i32).contains(&v);
        (100..=MAX).contains(&self.width)
            && (100..=MAX).contains(&self.height)
            && near(self.x)
            && near(self.y)
    }

    /// Whether the user can reach it on one of `screens` (each's place and size, physical
    /// pixels): its top band, where the title bar is, overlaps a screen by at least a grip.
    /// A place saved on a screen since unplugged is not, and the window system places it.
    pub fn on_a_screen(&self, screens: &[Geometry]) -> bool {
        const GRIP: i64 = 48;
        let (left, top) = (i64::from(self.x), i64::from(self.y));
        let right = left + i64::from(self.width);
        screens.iter().any(|s| {
            let (s_left, s_top) = (i64::from(s.x), i64::from(s.y));
            let (s_right, s_bottom) = (s_left + i64::from(s.width), s_top + i64::from(s.height));
            let overlap = right.min(s_right) - left.max(s_left);
            overlap >= GRIP && top >= s_top && top + GRIP <= s_bottom
        })
    }
}

/// The layouts of every window, as the app manages them.
pub struct Layouts {
    path: PathBuf,
    layout: Layout,
    /// Serialises read-modify-write of the file; holds the layouts as last written.
    stored: Mutex<Option<Stored>>,
    /// A problem found while reading the file, for the UI to show once.
    notice: Mutex<Option<String>>,
}

impl Layouts {
    pub fn new(data_root: &Path) -> Layouts {
        Layouts {
            path: data_root.join(FILE),
            layout: Layout::new(data_root),
            stored: Mutex::new(None),
            notice: Mutex::new(None),
        }
    }

    /// The file, read on first use. A file that cannot be read or parsed is moved aside to
    /// `quarantine/` (never silently overwritten) and the windows start with empty layouts.
    fn stored(&self) -> MutexGuard<'_, Option<Stored>> {
        let mut guard = lock(&self.stored);
        if guard.is_none() {
            *guard = Some(self.read());
        }
        guard
    }

    fn read(&self) -> Stored {
        if let Some(dir) = self.path.parent() {
            remove_temp_leftovers(dir);
        }
        let reason = match std::fs::read(&self.path) {
            Ok(bytes) => match serde_json::from_slice::<Stored>(&bytes) {
                Ok(stored) => return stored,
                Err(error) => format!("not valid: {error}"),
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Stored::default(),
            Err(error) => format!("unreadable: {error}"),
        };
        let message = match quarantine(&self.layout, &self.path, &reason) {
            Ok(q) => format!(
                "{} could not be used ({reason}); moved to {} and windows start with empty layouts",
                q.from, q.to
            ),
            Err(move_error) => format!(
                "{} could not be used ({reason}) and could not be moved aside ({move_error})",
                self.path.display()
            ),
        };
        tracing::warn!("{message}");
        *lock(&self.notice) = Some(message);
        Stored::default()
    }

    /// The layout last saved for the window `label`, if any.
    pub fn get(&self, label: &str) -> Option<Value> {
        self.stored()
            .as_ref()
            .and_then(|s| s.windows.get(label).cloned())
    }

    /// A problem found reading the file (reported once).
    pub fn take_notice(&self) -> Option<String> {
        drop(self.stored());
        lock(&self.notice).take()
    }

    /// Saves the layout of window `label`: a JSON object of at most [`MAX_LAYOUT_BYTES`].
    pub fn set(&self, label: &str, layout: Value) -> Result<(), WindowsError> {
        if !layout.is_object() {
            return Err(WindowsError::InvalidLayout(
                "expected a JSON object".to_string(),
            ));
        }
        let size = serde_json::to_vec(&layout).map(|v| v.len()).unwrap_or(0);
        if size > MAX_LAYOUT_BYTES {
            return Err(WindowsError::InvalidLayout(format!(
                "{size} bytes is more than the {MAX_LAYOUT_BYTES} allowed"
            )));
        }
        let mut guard = self.stored();
        let stored = guard.get_or_insert_with(Stored::default);
        if stored.windows.get(label) == Some(&layout) {
            return Ok(());
        }
        let previous = stored.windows.insert(label.to_string(), layout);
        if let Err(error) = self.write(stored) {
            // What is in memory stays what is on disk.
            match previous {
                Some(previous) => stored.windows.insert(label.to_string(), previous),
                None => stored.windows.remove(label),
            };
            return Err(error);
        }
        Ok(())
    }

    /// The size and place window `label` had when last seen.
    pub fn geometry(&self, label: &str) -> Option<Geometry> {
        self.stored()
            .as_ref()
            .and_then(|s| s.geometry.get(label).copied())
            .filter(Geometry::plausible)
    }

    /// Notes where window `label` is now (in memory; [`Layouts::save_geometry`] writes it).
    /// Answers whether it changed.
    pub fn note_geometry(&self, label: &str, update: impl FnOnce(&mut Geometry)) -> bool {
        let mut guard = self.stored();
        let stored = guard.get_or_insert_with(Stored::default);
        let entry = stored
            .geometry
            .entry(label.to_string())
            .or_insert(Geometry {
                x: 0,
                y: 0,
                width: 0,
                height: 0,
            });
        let before = *entry;
        update(entry);
        *entry != before
    }

    /// Writes the geometry noted so far (a move or resize sends many events: the caller writes
    /// once they stop).
    pub fn save_geometry(&self) -> Result<(), WindowsError> {
        let mut guard = self.stored();
        let stored = guard.get_or_insert_with(Stored::default);
        stored.geometry.retain(|_, g| g.plausible());
        self.write(stored)
    }

    /// Forgets the layout of a window the user closed.
    pub fn remove(&self, label: &str) -> Result<(), WindowsError> {
        let mut guard = self.stored();
        let stored = guard.get_or_insert_with(Stored::default);
        let geometry = stored.geometry.remove(label);
        if stored.windows.remove(label).is_some() || geometry.is_some() {
            self.write(stored)?;
        }
        Ok(())
    }

    /// The extra windows (`window-N`) that have a saved layout, in number order.
    pub fn extra_labels(&self) -> Vec<String> {
        let guard = self.stored();
        let mut labels: Vec<(u32, String)> = guard
            .as_ref()
            .map(|s| {
                s.windows
                    .keys()
                    .filter_map(|label| extra_number(label).map(|n| (n, label.clone())))
                    .collect()
            })
            .unwrap_or_default();
        labels.sort();
        labels.into_iter().map(|(_, label)| label).collect()
    }

    /// A label for a new window: not open now and without a saved layout.
    pub fn fresh_label(&self, open: impl Fn(&str) -> bool) -> String {
        let guard = self.stored();
        let saved = |label: &str| {
            guard
                .as_ref()
                .is_some_and(|s| s.windows.contains_key(label))
        };
        (2u32..)
            .map(|n| format!("{EXTRA_PREFIX}{n}"))
            .find(|label| !open(label) && !saved(label))
            .unwrap_or_else(|| format!("{EXTRA_PREFIX}{}", uuid::Uuid::new_v4().simple()))
    }

    fn write(&self, stored: &Stored) -> Result<(), WindowsError> {
        let write_error = |source| WindowsError::Write {
            path: self.path.display().to_string(),
            source,
        };
        let bytes =
            serde_json::to_vec_pretty(stored).map_err(|e| write_error(std::io::Error::other(e)))?;
        write_atomic(&self.path, &bytes).map_err(write_error)
    }
}

/// `window-7` → 7.
pub fn extra_number(label: &str) -> Option<u32> {
    label.strip_prefix(EXTRA_PREFIX)?.parse().ok()
}

/// Temp files a crash left beside windows.json.
fn remove_temp_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(TEMP_PREFIX) && name.ends_with(&format!("-{FILE}")) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

// The field-table checker docs/data-model.md is kept true with (shared with the core's tests).
#[cfg(test)]
#[path = "../crates/paseo-core/tests/support/doc_keys.rs"]
mod doc_keys;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The keys the desktop itself writes have rows in docs/data-model.md; the layouts' own keys
    /// are the UI's, checked with the layout the real UI saves (`tests/ui/layouts.rs`).
    #[test]
    fn the_data_model_doc_names_the_keys_of_windows_json() {
        let dir = tempfile::tempdir().unwrap();
        let layouts = Layouts::new(dir.path());
        layouts.set("main", json!({})).unwrap();
        layouts.set("window-2", json!({"tabs": []})).unwrap();
        layouts.note_geometry("main", |g| {
            g.width = 900;
            g.height = 700;
        });
        layouts.save_geometry().unwrap();
        let file: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(FILE)).unwrap()).unwrap();
        let shape = doc_keys::Shape::new(
            &[("windows", "<label>"), ("geometry", "<label>")],
            &["windows.<label>"],
        );
        let written = doc_keys::keys(&file, &shape);
        assert_eq!(written.len(), 8, "{written:?}");
        let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/data-model.md");
        let doc = std::fs::read_to_string(doc).unwrap();
        let rows = doc_keys::documented(&doc, "## windows.json").unwrap();
        let missing: Vec<_> = written.difference(&rows).collect();
        assert!(
            missing.is_empty(),
            "docs/data-model.md: windows.json has no row for {missing:?}"
        );
    }

    #[test]
    fn a_place_on_no_screen_is_not_restored() {
        let screen = |x, y, width, height| Geometry {
            x,
            y,
            width,
            height,
        };
        let laptop = screen(0, 0, 1920, 1080);
        let external = screen(1920, 0, 2560, 1440);
        let window = screen(2200, 100, 1200, 760);
        assert!(window.on_a_screen(&[laptop, external]));
        // The external screen was unplugged: its window's place is on no screen now.
        assert!(!window.on_a_screen(&[laptop]));
        // Mostly off the left edge, its title bar still graspable; above the top, not.
        assert!(screen(-1100, 50, 1200, 760).on_a_screen(&[laptop]));
        assert!(!screen(-1190, 50, 1200, 760).on_a_screen(&[laptop]));
        assert!(!screen(100, -30, 1200, 760).on_a_screen(&[laptop]));
        assert!(!screen(100, 1060, 1200, 760).on_a_screen(&[laptop]));
        assert!(!window.on_a_screen(&[]));
    }

    #[test]
    fn geometry_is_kept_per_window_and_a_file_without_it_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        // The shape earlier versions wrote: layouts only.
        std::fs::write(
            dir.path().join(FILE),
            br#"{"windows": {"main": {"tabs": ["a"]}}}"#,
        )
        .unwrap();
        let layouts = Layouts::new(dir.path());
        assert_eq!(layouts.geometry("main"), None);
        assert!(layouts.note_geometry("main", |g| {
            g.width = 900;
            g.height = 700;
        }));
        assert!(layouts.note_geometry("main", |g| {
            g.x = 50;
            g.y = 40;
        }));
        assert!(!layouts.note_geometry("main", |g| g.x = 50), "no change");
        // A window seen only at 0×0 (hidden) is not kept.
        layouts.note_geometry("window-2", |g| g.x = 10);
        layouts.save_geometry().unwrap();
        let again = Layouts::new(dir.path());
        let want = Geometry {
            x: 50,
            y: 40,
            width: 900,
            height: 700,
        };
        assert_eq!(again.geometry("main"), Some(want));
        assert_eq!(again.geometry("window-2"), None);
        assert_eq!(
            again.get("main"),
            Some(json!({"tabs": ["a"]})),
            "layouts kept"
        );
        // Nonsense on disk is ignored, not applied.
        std::fs::write(
            dir.path().join(FILE),
            br#"{"windows": {}, "geometry": {"main": {"x": 0, "y": 0, "width": 5, "height": 99999}}}"#,
        )
        .unwrap();
        assert_eq!(Layouts::new(dir.path()).geometry("main"), None);
    }

    #[test]
    fn layouts_round_trip_per_label_and_survive_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let layouts = Layouts::new(dir.path());
        assert_eq!(layouts.get("main"), None);
        layouts.set("main", json!({"tabs": ["a"]})).unwrap();
        layouts.set("window-3", json!({"tabs": ["b"]})).unwrap();
        layouts.set("window-2", json!({"tabs": []})).unwrap();
        let again = Layouts::new(dir.path());
        assert_eq!(again.get("main"), Some(json!({"tabs": ["a"]})));
        assert_eq!(again.extra_labels(), vec!["window-2", "window-3"]);
        assert_eq!(again.fresh_label(|l| l == "window-4"), "window-5");
        again.remove("window-2").unwrap();
        assert_eq!(
            Layouts::new(dir.path()).extra_labels(),
            vec!["window-3".to_string()]
        );
    }

    #[test]
    fn bad_layouts_are_refused_and_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let layouts = Layouts::new(dir.path());
        layouts.set("main", json!({"ok": true})).unwrap();
        let error = layouts.set("main", json!([1, 2])).unwrap_err();
        assert!(
            error.to_string().contains("expected a JSON object"),
            "{error}"
        );
        let huge = json!({"x": "y".repeat(MAX_LAYOUT_BYTES)});
        let error = layouts.set("main", huge).unwrap_err();
        assert!(error.to_string().contains("allowed"), "{error}");
        assert_eq!(
            Layouts::new(dir.path()).get("main"),
            Some(json!({"ok": true}))
        );
    }

    #[test]
    fn a_corrupt_file_is_moved_aside_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), b"{not json").unwrap();
        let layouts = Layouts::new(dir.path());
        assert_eq!(layouts.get("main"), None);
        let notice = layouts.take_notice().unwrap();
        assert!(notice.contains("moved to"), "{notice}");
        assert!(!dir.path().join(FILE).exists());
        let aside: Vec<_> = std::fs::read_dir(dir.path().join("quarantine"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(
            std::fs::read(aside[0].path()).unwrap(),
            b"{not json".to_vec()
        );
        assert_eq!(layouts.take_notice(), None, "reported once");
    }

    #[test]
    fn an_unreadable_file_is_moved_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be: unreadable even as root.
        std::fs::create_dir_all(dir.path().join(FILE).join("sub")).unwrap();
        std::fs::write(dir.path().join(FILE).join("sub/mine"), b"keep").unwrap();
        let layouts = Layouts::new(dir.path());
        assert_eq!(layouts.get("main"), None);
        let notice = layouts.take_notice().unwrap();
        assert!(
            notice.contains("unreadable") && notice.contains("moved to"),
            "{notice}"
        );
        layouts.set("main", json!({"tabs": ["a"]})).unwrap();
        let aside: Vec<_> = std::fs::read_dir(dir.path().join("quarantine"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(
            std::fs::read(aside[0].path().join("sub/mine")).unwrap(),
            b"keep".to_vec()
        );
        assert_eq!(
            Layouts::new(dir.path()).get("main"),
            Some(json!({"tabs": ["a"]}))
        );
    }
}
