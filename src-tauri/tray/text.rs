//! The tray menu's words: menu labels.

/// A label as the menu library takes it: `&` marks a mnemonic there, `&&` is a literal `&`.
pub(super) fn menu_text(label: &str) -> String {
    label.replace('&', "&&")
}

/// The "and N more" line.
pub(super) fn more_label(more: usize) -> String {
    format!("and {more} more…")
}
