//! How an agent is named where the window is not: in the tray menu and in desktop
//! notifications (one short line, a host's agent with its host), so the two never disagree.

use paseo_core::runtime::AgentSnapshot;

/// The longest agent title the tray menu and notifications show, in characters.
pub const MAX_TITLE_CHARS: usize = 40;

/// The agent's name (the core's one rule, as the window names it: its title, else its provider
/// and the start of its id) on one short line.
pub fn display_title(agent: &AgentSnapshot) -> String {
    let r = &agent.record;
    let name = paseo_core::model::display_name(&r.title, &r.provider, r.id);
    let title = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.chars().count() <= MAX_TITLE_CHARS {
        return title;
    }
    let mut short: String = title.chars().take(MAX_TITLE_CHARS - 1).collect();
    short.truncate(short.trim_end().len());
    short.push('…');
    short
}

/// A connected host's agent as the tray and the desktop notifications name it (SPEC 17): its
/// title with the host's, `lead (on box)`, so the user knows which machine to look at.
pub fn on_host(mut agent: AgentSnapshot, host: &str) -> AgentSnapshot {
    agent.record.title = format!("{} (on {host})", display_title(&agent));
    agent.name = None;
    agent
}
