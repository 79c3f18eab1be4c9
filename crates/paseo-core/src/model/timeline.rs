//! Timeline items (SPEC 2): what an agent's timeline shows, numbered per agent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ids::Timestamp;
use super::notice::Notice;

/// The kind of one timeline item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A prompt the user (or an agent through MCP) sent.
    User,
    /// Assistant text.
    Assistant,
    /// Model reasoning, when a provider exposes it.
    Reasoning,
    /// A tool call (collapsed in the UI); `call_id` links its result.
    ToolCall,
    /// A tool call's result.
    ToolResult,
    /// Raw process output (shell and command agents).
    Output,
    /// An error (a failed turn, a crashed process).
    Error,
    /// A system notice: finish notices, lifecycle notes.
    System,
    /// A permission request or its answer.
    Permission,
}

/// One item of an agent's timeline. `seq` is per agent, dense from 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineItem {
    pub seq: u64,
    pub ts: Timestamp,
    pub kind: ItemKind,
    #[serde(default)]
    pub text: String,
    /// The turn this item belongs to (0 = outside any turn).
    #[serde(default)]
    pub turn: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// For output items: "stdout" or "stderr".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// For output items: how a terminal would style `text` (its escape sequences parsed out),
    /// as consecutive runs covering it. Empty (and absent on disk, as in timelines written
    /// before styles were kept) when the text is plain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<StyledRun>,
    /// A finish notice this agent received (a system item, SPEC 4): shown from these fields,
    /// never parsed back from `text`, and how a notice re-derived after a crash is recognised
    /// as already delivered (by its id). Absent in timelines written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<Box<Notice>>,
}

/// A stretch of output text in one terminal style. `len` counts Unicode scalar values (what
/// Rust's `chars()` and JavaScript's string iterator both yield).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StyledRun {
    pub len: u32,
    #[serde(flatten)]
    pub style: TermStyle,
}

/// The SGR attributes a terminal would apply (ECMA-48 "Select Graphic Rendition").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TermStyle {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fg: Option<TermColor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bg: Option<TermColor>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bold: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dim: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub italic: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub underline: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inverse: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strike: bool,
}

impl TermStyle {
    pub fn is_plain(&self) -> bool {
        *self == TermStyle::default()
    }
}

/// A terminal colour: a palette index (0–15 the theme's named colours, 16–255 the xterm cube
/// and greys), serialized as a number; or a 24-bit colour, serialized as `[r, g, b]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TermColor {
    Palette(u8),
    Rgb([u8; 3]),
}

/// Timeline content before the runtime numbers it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewItem {
    pub kind: ItemKind,
    pub text: String,
    pub call_id: Option<String>,
    pub tool_name: Option<String>,
    pub input: Option<Value>,
    pub is_error: bool,
    pub stream: Option<String>,
    pub runs: Vec<StyledRun>,
    pub notice: Option<Box<Notice>>,
}

impl TimelineItem {
    /// A system item written before finish notices were structured gets its notice's fields
    /// from its text ([`super::notice::legacy`]), so every reader shows notices from fields.
    pub fn with_legacy_notice(mut self) -> Self {
        if self.kind == ItemKind::System && self.notice.is_none() {
            self.notice = super::notice::legacy(&self.text, self.ts).map(Box::new);
        }
        self
    }
}

impl NewItem {
    pub fn new(kind: ItemKind, text: impl Into<String>) -> Self {
        NewItem {
            kind,
            text: text.into(),
            call_id: None,
            tool_name: None,
            input: None,
            is_error: false,
            stream: None,
            runs: Vec::new(),
            notice: None,
        }
    }
    /// A finish notice received: a system item carrying the notice itself.
    pub fn notice(notice: &Notice, text: impl Into<String>) -> Self {
        NewItem {
            notice: Some(Box::new(notice.clone())),
            ..NewItem::new(ItemKind::System, text)
        }
    }
    pub fn output(stream: &str, text: impl Into<String>) -> Self {
        NewItem {
            stream: Some(stream.to_string()),
            ..NewItem::new(ItemKind::Output, text)
        }
    }
    pub fn tool_call(call_id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        NewItem {
            call_id: Some(call_id.into()),
            tool_name: Some(name.into()),
            input: Some(input),
            ..NewItem::new(ItemKind::ToolCall, "")
        }
    }
    pub fn tool_result(
        call_id: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        NewItem {
            call_id: Some(call_id.into()),
            is_error,
            ..NewItem::new(ItemKind::ToolResult, text)
        }
    }
    pub fn numbered(self, seq: u64, turn: u64, ts: Timestamp) -> TimelineItem {
        TimelineItem {
            seq,
            ts,
            kind: self.kind,
            text: self.text,
            turn,
            call_id: self.call_id,
            tool_name: self.tool_name,
            input: self.input,
            is_error: self.is_error,
            stream: self.stream,
            runs: self.runs,
            notice: self.notice,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timeline line written before styles were kept loads, plain; a styled one round-trips
    /// with its runs in the documented shape.
    #[test]
    fn items_without_runs_load_and_runs_round_trip() {
        let old = r#"{"seq":3,"ts":"2026-12-01T10:00:00.000Z","kind":"output","text":"hi\n","turn":1,"stream":"stdout"}"#;
        let it: TimelineItem = serde_json::from_str(old).unwrap();
        assert!(it.runs.is_empty());
        assert_eq!(it.text, "hi\n");
        assert!(!serde_json::to_string(&it).unwrap().contains("runs"));
        let styled = TimelineItem {
            runs: vec![
                StyledRun {
                    len: 1,
                    style: TermStyle {
                        fg: Some(TermColor::Palette(9)),
                        bold: true,
                        ..TermStyle::default()
                    },
                },
                StyledRun {
                    len: 2,
                    style: TermStyle {
                        bg: Some(TermColor::Rgb([1, 2, 3])),
                        ..TermStyle::default()
                    },
                },
            ],
            ..it
        };
        let json = serde_json::to_value(&styled).unwrap();
        assert_eq!(
            json["runs"],
            serde_json::json!([{"len": 1, "fg": 9, "bold": true}, {"len": 2, "bg": [1, 2, 3]}])
        );
        let back: TimelineItem = serde_json::from_value(json).unwrap();
        assert_eq!(back, styled);
    }
}
