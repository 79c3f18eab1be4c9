//! Freedesktop notifications (org.freedesktop.Notifications on the session bus), spoken
//! directly with zbus: tauri-plugin-notification has no click callback on desktop targets (its
//! action API is mobile-only), and zbus is already in the tree (the tray-host check, single
//! instance). Each notification carries the `default` action, which servers report as
//! `ActionInvoked(id, "default")` when the user clicks the notification's body; the click opens
//! the agent that notification is about.

use super::{Note, NotifyError};
use futures::StreamExt;
use paseo_core::model::AgentId;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use zbus::zvariant::Value;

/// The app name servers show and group by.
const APP_NAME: &str = "Paseo";
/// Notifications remembered for a click; older ones are forgotten (their click does nothing).
const REMEMBERED: usize = 256;

#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, Value<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: String) -> zbus::Result<()>;

    #[zbus(signal)]
    fn notification_closed(&self, id: u32, reason: u32) -> zbus::Result<()>;
}

/// Which agent each shown notification opens, newest last.
#[derive(Default)]
struct Shown {
    order: VecDeque<u32>,
    agents: HashMap<u32, AgentId>,
}

impl Shown {
    fn remember(&mut self, id: u32, agent: AgentId) {
        if self.agents.insert(id, agent).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.agents.remove(&old);
            }
        }
    }

    fn forget(&mut self, id: u32) {
        self.agents.remove(&id);
        self.order.retain(|known| *known != id);
    }
}

/// The session bus's notification server, as the app uses it. Cheap to clone.
#[derive(Clone)]
pub struct Desktop {
    proxy: NotificationsProxy<'static>,
    shown: Arc<Mutex<Shown>>,
}

impl Desktop {
    /// Connects to the session bus and follows clicks: `open` gets the agent of a clicked
    /// notification. The server itself may come later (it is asked at each notification).
    pub async fn connect(
        open: impl Fn(AgentId) + Send + Sync + 'static,
    ) -> Result<Desktop, NotifyError> {
        let connection = zbus::Connection::session().await?;
        // zbus answers method calls only once its object server exists; without it a peer that
        // calls this connection (a bus browser, a tray host probing every connection of the
        // app) waits out its whole timeout. It serves nothing, so every call gets an error reply.
        connection.object_server();
        let proxy = NotificationsProxy::new(&connection).await?;
        let shown = Arc::new(Mutex::new(Shown::default()));
        // Signals are matched on the well-known name, so only its owner's clicks count; the
        // agent comes from our own table, never from the signal.
        let mut clicks = proxy.receive_action_invoked().await?;
        let mut closes = proxy.receive_notification_closed().await?;
        let table = shown.clone();
        tauri::async_runtime::spawn(async move {
            while let Some(signal) = clicks.next().await {
                let Ok(args) = signal.args() else { continue };
                if args.action_key != "default" {
                    continue;
                }
                let agent = super::lock(&table).agents.get(&args.id).copied();
                if let Some(agent) = agent {
                    tracing::info!(agent = %agent, "notification clicked");
                    open(agent);
                }
            }
        });
        let table = shown.clone();
        tauri::async_runtime::spawn(async move {
            while let Some(signal) = closes.next().await {
                if let Ok(args) = signal.args() {
                    super::lock(&table).forget(args.id);
                }
            }
        });
        Ok(Desktop { proxy, shown })
    }

    /// Shows `note`; returns the server's id for it.
    pub async fn show(&self, note: &Note) -> Result<u32, NotifyError> {
        // A server that reads markup in bodies would take an agent's `<a href=…>` or `<img>`
        // (titles and errors come from agents) for its own.
        let markup = self
            .proxy
            .get_capabilities()
            .await
            .map(|caps| caps.iter().any(|c| c == "body-markup"))
            .unwrap_or(true);
        let body = if markup {
            escape(&note.body)
        } else {
            note.body.clone()
        };
        let mut hints = HashMap::new();
        hints.insert("desktop-entry", Value::from("paseo-desktop"));
        hints.insert("category", Value::from("presence"));
        let id = self
            .proxy
            .notify(
                APP_NAME,
                0,
                "dialog-information",
                &note.summary,
                &body,
                &["default", "Open"],
                hints,
                -1,
            )
            .await?;
        super::lock(&self.shown).remember(id, note.open);
        Ok(id)
    }
}

/// Plain text as freedesktop body markup (a small XML subset) shows it.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_agent_text_is_shown_not_obeyed() {
        assert_eq!(
            escape("<a href=\"file:///etc\">x</a> & <img src='y'>"),
            "&lt;a href=&quot;file:///etc&quot;&gt;x&lt;/a&gt; &amp; &lt;img src=&apos;y&apos;&gt;"
        );
    }

    #[test]
    fn the_click_table_is_bounded() {
        let mut shown = Shown::default();
        let agent = AgentId::new();
        for id in 0..(REMEMBERED as u32 + 10) {
            shown.remember(id, agent);
        }
        assert_eq!(shown.agents.len(), REMEMBERED);
        assert!(!shown.agents.contains_key(&0));
        shown.forget(REMEMBERED as u32 + 9);
        assert_eq!(shown.order.len(), REMEMBERED - 1);
    }
}
