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
    pub fn is_prompt(&self) -> bool {
        matches!(self, TurnInput::Prompt(_))
    }

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

/// A prompt waiting for its agent's session (SPEC 15, nothing lost): a first prompt while the
/// session starts or waits for a live slot (SPEC 14), a prompt to an agent that is resuming.
/// Kept in the record (`waitingPrompt`), so a quit or a crash keeps it: it runs after the
/// restart, once, and its caller hears of that turn, never a made-up "interrupted".
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingPrompt {
    pub prompt: String,
    /// The agent whose call it was; absent: the user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<AgentId>,
}

impl WaitingPrompt {
    /// The prompt a waiting turn carries, if it is one (a finish notice waits in its
    /// target's inbox on disk instead).
    pub fn of(input: &TurnInput, origin: &TurnOrigin) -> Option<WaitingPrompt> {
        let TurnInput::Prompt(prompt) = input else {
            return None;
        };
        let caller = match origin {
            TurnOrigin::User => None,
            TurnOrigin::Agent(c) => Some(*c),
            TurnOrigin::Notice(_) => return None,
        };
        Some(WaitingPrompt {
            prompt: prompt.clone(),
            caller,
        })
    }

    /// The turn's input and origin again.
    pub fn turn(&self) -> (TurnInput, TurnOrigin) {
        let origin = match self.caller {
            Some(c) => TurnOrigin::Agent(c),
            None => TurnOrigin::User,
        };
        (TurnInput::Prompt(self.prompt.clone()), origin)
    }
}
