//! The tray over D-Bus, as a panel sees it: the app's menu (com.canonical.dbusmenu, as
//! libayatana-appindicator exports it) read and clicked with gdbus, its icon, and a minimal tray
//! host (a StatusNotifierWatcher) that items register with.

use super::harness::Harness;
use super::proc::stdout_of;
use super::{poll, TIMEOUT};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

const DBUS_NAME: &str = "org.freedesktop.DBus";
const DBUS_PATH: &str = "/org/freedesktop/DBus";
const TRAY_ITEM_PATH: &str = "/org/ayatana/NotificationItem/tray_icon_tray_app_main";
const TRAY_MENU_PATH: &str = "/org/ayatana/NotificationItem/tray_icon_tray_app_main/Menu";

/// How long one call may wait for its reply. A connection that never answers (zbus before its
/// object server exists) would otherwise hold every poll for gdbus' default 25 s.
const CALL_TIMEOUT_SECS: u64 = 8;

/// Calls `method` on object `path` of `dest` on the bus at `bus`; gdbus' text rendering of the
/// reply, or None if the call failed.
async fn gdbus(bus: &str, dest: &str, path: &str, method: &str, args: &[&str]) -> Option<String> {
    stdout_of(
        tokio::process::Command::new("gdbus")
            .arg("call")
            .args(["--address", bus])
            .args(["--timeout", &CALL_TIMEOUT_SECS.to_string()])
            .args(["--dest", dest, "--object-path", path, "--method", method])
            .args(args),
    )
    .await
}

async fn unique_names(bus: &str) -> Vec<String> {
    let listing = gdbus(
        bus,
        DBUS_NAME,
        DBUS_PATH,
        "org.freedesktop.DBus.ListNames",
        &[],
    )
    .await
    .unwrap_or_default();
    listing
        .split('\'')
        .filter(|part| part.starts_with(':'))
        .map(str::to_string)
        .collect()
}

async fn connection_pid(bus: &str, name: &str) -> Option<u32> {
    let method = "org.freedesktop.DBus.GetConnectionUnixProcessID";
    let reply = gdbus(bus, DBUS_NAME, DBUS_PATH, method, &[name]).await?;
    // "(uint32 1234,)"
    reply
        .trim()
        .trim_start_matches("(uint32 ")
        .trim_end_matches(",)")
        .parse()
        .ok()
}

/// The app's tray menu as a tray host sees it (com.canonical.dbusmenu, as exported by
/// libayatana-appindicator).
pub struct TrayMenu {
    bus: String,
    dest: String,
}

impl TrayMenu {
    /// The labelled items (id, label) in menu order; separators have no label and are left out.
    pub async fn items(&self) -> Vec<(i32, String)> {
        let method = "com.canonical.dbusmenu.GetLayout";
        let args = ["--", "0", "-1", "[\"label\"]"];
        let layout = gdbus(&self.bus, &self.dest, TRAY_MENU_PATH, method, &args)
            .await
            .unwrap_or_default();
        parse_menu_layout(&layout)
    }

    pub async fn labels(&self) -> Vec<String> {
        self.items()
            .await
            .into_iter()
            .map(|(_, label)| label)
            .collect()
    }

    /// Clicks the item labelled `label`, as a tray host does when the user picks it.
    pub async fn click(&self, label: &str) {
        let items = self.items().await;
        let id = items
            .iter()
            .find(|(_, text)| text == label)
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("no tray menu item {label:?} in {items:?}"));
        let method = "com.canonical.dbusmenu.Event";
        let id = id.to_string();
        let args = [id.as_str(), "clicked", "<0>", "0"];
        gdbus(&self.bus, &self.dest, TRAY_MENU_PATH, method, &args)
            .await
            .unwrap_or_else(|| panic!("clicking tray item {label:?} failed"));
    }

    /// The icon file the tray item shows now (the StatusNotifierItem's `IconName`, which
    /// libayatana-appindicator sets to the path of the PNG it was handed).
    pub async fn icon_file(&self) -> Option<PathBuf> {
        let method = "org.freedesktop.DBus.Properties.Get";
        let args = ["org.kde.StatusNotifierItem", "IconName"];
        let reply = gdbus(&self.bus, &self.dest, TRAY_ITEM_PATH, method, &args).await?;
        // "(<'/run/user/0/paseo-tray-123/tray-icon-main-1.png'>,)"
        let path = reply.split('\'').nth(1)?;
        Some(PathBuf::from(path))
    }

    /// Waits until the menu has an item labelled `label`.
    pub async fn wait_for_label(&self, label: &str) {
        poll(&format!("tray item {label:?}"), TIMEOUT, || async {
            self.labels()
                .await
                .iter()
                .any(|text| text == label)
                .then_some(())
        })
        .await
    }
}

/// Pulls `(id, label)` pairs out of gdbus' text rendering of a dbusmenu layout, e.g.
/// `<(4, {'label': <'Hide window'>}, @av [])>`.
fn parse_menu_layout(layout: &str) -> Vec<(i32, String)> {
    let mut items = Vec::new();
    for chunk in layout.split("<(").skip(1) {
        let Some((id, rest)) = chunk.split_once(", ") else {
            continue;
        };
        let Ok(id) = id.trim().parse::<i32>() else {
            continue;
        };
        if let Some(after) = rest.split_once("'label': <'").map(|(_, after)| after) {
            if let Some((label, _)) = after.split_once("'>") {
                items.push((id, label.to_string()));
            }
        }
    }
    items
}

/// A minimal tray host: owns `org.kde.StatusNotifierWatcher` and records the items that
/// register, as a panel does. Dropping it leaves the bus (the tray host "goes away").
pub struct TrayHost {
    connection: zbus::blocking::Connection,
    registered: Arc<Mutex<Vec<String>>>,
}

struct Watcher {
    registered: Arc<Mutex<Vec<String>>>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    fn register_status_notifier_item(
        &mut self,
        service: String,
        #[zbus(header)] header: zbus::message::Header<'_>,
    ) {
        // Items register with a path (ayatana) or a bus name; keep the sender with it.
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        self.registered
            .lock()
            .unwrap()
            .push(format!("{sender}{service}"));
    }

    fn register_status_notifier_host(&mut self, _service: String) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.registered.lock().unwrap().clone()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

impl TrayHost {
    fn start(bus: &str) -> TrayHost {
        let registered = Arc::new(Mutex::new(Vec::new()));
        let connection = zbus::blocking::connection::Builder::address(bus)
            .unwrap()
            .name("org.kde.StatusNotifierWatcher")
            .unwrap()
            .serve_at(
                "/StatusNotifierWatcher",
                Watcher {
                    registered: registered.clone(),
                },
            )
            .unwrap()
            .build()
            .expect("cannot become the StatusNotifierWatcher");
        TrayHost {
            connection,
            registered,
        }
    }

    /// What registered so far (sender + item path or name).
    pub fn registered(&self) -> Vec<String> {
        self.registered.lock().unwrap().clone()
    }

    /// Waits until some item has registered with this host.
    pub async fn wait_for_item(&self) -> String {
        poll("a tray item to register", TIMEOUT, || {
            let first = self.registered().into_iter().next();
            async move { first }
        })
        .await
    }

    pub fn connection(&self) -> &zbus::blocking::Connection {
        &self.connection
    }
}

impl Harness {
    /// The tray menu `pid` exports on this harness' bus (waits until it is there).
    pub async fn tray_menu(&self, pid: u32) -> TrayMenu {
        let bus = self
            .bus_address()
            .expect("tray_menu needs Harness::builder(..).dbus(true)")
            .to_string();
        poll("the app's tray menu on the bus", TIMEOUT, || {
            let bus = bus.clone();
            async move {
                for name in unique_names(&bus).await {
                    if connection_pid(&bus, &name).await == Some(pid) {
                        let menu = TrayMenu {
                            bus: bus.clone(),
                            dest: name,
                        };
                        let asked = std::time::Instant::now();
                        let items = menu.items().await;
                        // Every connection of the app must answer, if only with an error: one
                        // that stays silent stalls any panel or tool that talks to the app.
                        assert!(
                            asked.elapsed().as_secs() < CALL_TIMEOUT_SECS,
                            "the app's D-Bus connection {} never answered a call",
                            menu.dest
                        );
                        if !items.is_empty() {
                            return Some(menu);
                        }
                    }
                }
                None
            }
        })
        .await
    }

    /// Puts a tray host on this harness' bus: a StatusNotifierWatcher speaking the real D-Bus
    /// protocol that panels implement (KDE, GNOME's AppIndicator extension, XFCE, …).
    pub fn start_tray_host(&self) -> TrayHost {
        let bus = self
            .bus_address()
            .expect("start_tray_host needs Harness::builder(..).dbus(true)");
        TrayHost::start(bus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_dbusmenu_layout() {
        let layout = "(uint32 2, (0, {'label': <'Label Empty'>}, [<(2, {'label': <'0 running · 0 need you · 0 total'>}, @av [])>, <(3, @a{sv} {}, @av [])>, <(4, {'label': <'Hide window'>}, @av [])>]))";
        assert_eq!(
            parse_menu_layout(layout),
            vec![
                (2, "0 running · 0 need you · 0 total".to_string()),
                (4, "Hide window".to_string())
            ]
        );
    }
}
