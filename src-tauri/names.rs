//! How an agent is named where the window is not: in the tray menu and in desktop
//! notifications (one short line, a host's agent with its host), so the two never disagree.

use paseo_core::runtime::AgentSnapshot;

/// The longest agent title the tray menu and notifications show, in characters.
pub const MAX_TITLE_CHARS: usize = 40;

/// The agent's title on one short line; the provider's name when it has none.
pub fn display_title(agent: &AgentSnapshot) -> String {
    let words: Vec<&str> = agent.record.title.split_whitespace().collect();
    let title = if words.is_empty() {
        format!("{} agent", agent.record.provider)
    } else {
        words.join(" ")
    };
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
    agent
}
