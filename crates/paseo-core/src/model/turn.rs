//! Turns (SPEC 2): what starts one, who started it, and how it ended.

use super::ids::AgentId;

/// What a turn is started with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnInput {
    /// A prompt from the user or from an agent through MCP.
    Prompt(String),
    /// A finish notice, already wrapped in its system tag, delivered as a turn's input.
    Notice(String),
}

impl TurnInput {
    pub fn text(&self) -> &str {
        match self {
            TurnInput::Prompt(t) | TurnInput::Notice(t) => t,
        }
    }
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnOutcome {
    Completed,
    /// `message` is what the timeline says; `detail`, when set, is output the timeline already
    /// shows above it (a command's stderr tail): added to the agent's error and its parent's
    /// notice, where the output is not shown, and not said again in the timeline.
    Failed {
        message: String,
        detail: Option<String>,
    },
    Canceled,
}

/// What started the current turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnOrigin {
    User,
    Agent(AgentId),
    /// A finish notice, by its id.
    Notice(String),
}
