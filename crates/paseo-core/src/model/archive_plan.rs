//! What an archive gesture touches, derived once for every client (SPEC 5): the agents it puts
//! away with how much each takes along and stops, and, for "Archive finished", the children it
//! leaves and why. A confirm dialog names exactly this, so no client recounts a tree it may
//! hold only part of.

use serde::{Deserialize, Serialize};

use super::{AgentId, Status};

/// Why "Archive finished" leaves a child where it is. The words are the ones a dialog shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unfinished {
    #[serde(rename = "running")]
    Running,
    #[serde(rename = "starting")]
    Starting,
    /// A pending permission or held start, or an unseen failure: archiving would hide what
    /// asks for the user.
    #[serde(rename = "needs you")]
    NeedsYou,
    /// The cascade would stop work the gesture says it leaves alone.
    #[serde(rename = "a subagent running")]
    SubagentRunning,
}

impl Unfinished {
    /// The rule, first reason first: its own status, then whether it asks for the user, then
    /// what runs below it.
    pub fn of(status: Status, needs_you: bool, runs_below: bool) -> Option<Unfinished> {
        match status {
            Status::Running => Some(Unfinished::Running),
            Status::Initializing => Some(Unfinished::Starting),
            _ if needs_you => Some(Unfinished::NeedsYou),
            _ if runs_below => Some(Unfinished::SubagentRunning),
            _ => None,
        }
    }
}

/// An agent the gesture archives, with its unarchived subagents (they go along).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveHead {
    pub id: AgentId,
    pub title: String,
    pub provider: String,
    /// It is running or starting: archiving stops it.
    pub running: bool,
    /// The word its row shows ("finished", "failed", "idle", "denied"…): a dialog says what
    /// it puts away as the rows say it, never calling a failure "finished".
    #[serde(default)]
    pub word: String,
    pub subagents: usize,
    pub running_subagents: usize,
}

/// A child "Archive finished" leaves, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptChild {
    pub id: AgentId,
    pub title: String,
    pub provider: String,
    pub why: Unfinished,
}

/// Everything one archive gesture touches, as it stands when asked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchivePlan {
    pub heads: Vec<ArchiveHead>,
    pub kept: Vec<KeptChild>,
}

impl ArchivePlan {
    /// The ids the gesture archives as heads (their subagents go along).
    pub fn head_ids(&self) -> Vec<AgentId> {
        self.heads.iter().map(|h| h.id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_unfinished_for_its_first_reason_in_order() {
        use Unfinished::*;
        assert_eq!(Unfinished::of(Status::Running, true, true), Some(Running));
        assert_eq!(
            Unfinished::of(Status::Initializing, true, true),
            Some(Starting)
        );
        assert_eq!(Unfinished::of(Status::Idle, true, true), Some(NeedsYou));
        assert_eq!(
            Unfinished::of(Status::Error, false, true),
            Some(SubagentRunning)
        );
        assert_eq!(Unfinished::of(Status::Closed, false, false), None);
        assert_eq!(Unfinished::of(Status::Idle, false, false), None);
    }

    #[test]
    fn the_reasons_travel_as_the_words_a_dialog_shows() {
        let words: Vec<String> = [
            Unfinished::Running,
            Unfinished::Starting,
            Unfinished::NeedsYou,
            Unfinished::SubagentRunning,
        ]
        .iter()
        .map(|u| serde_json::to_string(u).unwrap_or_default())
        .collect();
        assert_eq!(
            words,
            [
                "\"running\"",
                "\"starting\"",
                "\"needs you\"",
                "\"a subagent running\""
            ]
        );
        let back: Unfinished = serde_json::from_str("\"needs you\"").unwrap_or(Unfinished::Running);
        assert_eq!(back, Unfinished::NeedsYou);
    }
}
