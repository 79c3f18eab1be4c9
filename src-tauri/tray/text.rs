//! The tray menu's words: agent titles cut to one short line, menu labels.

use super::MAX_TITLE_CHARS;
use paseo_core::runtime::AgentSnapshot;

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

/// A label as the menu library takes it: `&` marks a mnemonic there, `&&` is a literal `&`.
pub(super) fn menu_text(label: &str) -> String {
    label.replace('&', "&&")
}

/// The "and N more" line.
pub(super) fn more_label(more: usize) -> String {
    format!("and {more} more…")
}

/// A connected host's agent as the tray and the desktop notifications name it (SPEC 17): its
/// title with the host's, `lead (on box)`, so the user knows which machine to look at.
pub fn on_host(mut agent: AgentSnapshot, host: &str) -> AgentSnapshot {
    agent.record.title = format!("{} (on {host})", display_title(&agent));
    agent
}
