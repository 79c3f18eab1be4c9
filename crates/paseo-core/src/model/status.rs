//! The one status rule (SPEC 6 buckets, and who "needs you"): computed here, once, from an
//! agent's record and whether a permission request is pending. The engine's workspace activity
//! and track counts, the runtime's fleet counts, every snapshot (and so the tray and the UI) use
//! these two functions; nothing else decides them.
//!
//! **Bucket**, first match wins (SPEC 6's order, most urgent first):
//! 1. `needs_input`: a permission request is pending;
//! 2. `failed`: the status is `error`;
//! 3. `running`: the status is `initializing` or `running`;
//! 4. `attention`: attention is required for a reason other than `permission` or `canceled` (a
//!    finished turn, or an interruption, the user has not seen);
//! 5. `queued`: the engine's refinement of `running` for an agent whose start waits for a
//!    live slot (SPEC 14 `maxLiveAgents`; not in the record, see `AgentState::bucket`);
//! 6. `done`: anything else. A `permission` reason with no pending request is stale (the request
//!    went away with its process): nothing is left to answer, so it is `done`. An unseen
//!    `canceled` turn is `done` too: it did not finish, so it never shows as a finish (the
//!    window gives it its own word and glyph, grey like every idle state).
//!
//! **Needs you**: a permission request is pending, or an error the user has not seen yet
//! (attention required with reason `error`). A seen error stays `failed` but no longer needs
//! the user; a finished turn never "needs" the user the way a blocked or failed agent does.
//!
//! An agent's own bucket is what its tab and its track row show; what it shows in its tree's
//! workspace is [`tree_bucket`], which the engine's activity index keeps per workspace.

use serde::{Deserialize, Serialize};

use super::agent::{AgentRecord, AttentionReason, Status};

/// The status bucket of an agent or a workspace (SPEC 6), most urgent first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    NeedsInput,
    Failed,
    Running,
    Attention,
    /// Created, its start waiting for a `maxLiveAgents` slot (SPEC 14): not running yet.
    Queued,
    Done,
}

impl Bucket {
    pub const COUNT: usize = 6;
    pub const ALL: [Bucket; Bucket::COUNT] = [
        Bucket::NeedsInput,
        Bucket::Failed,
        Bucket::Running,
        Bucket::Attention,
        Bucket::Queued,
        Bucket::Done,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn as_str(&self) -> &'static str {
        match self {
            Bucket::NeedsInput => "needs_input",
            Bucket::Failed => "failed",
            Bucket::Running => "running",
            Bucket::Attention => "attention",
            Bucket::Queued => "queued",
            Bucket::Done => "done",
        }
    }
}

/// What a held turn the user denied ends with (SPEC 14: `error`, "denied by the user").
pub const DENIED: &str = "denied by the user";

/// A held start or turn the user denied: its status is `error` for the caller's sake (its finish
/// notice says "failed: denied by the user"), but nothing broke: the user chose it. It shows
/// `done` with its own word ("denied"), never the red "failed", and needs nobody.
pub fn denied(record: &AgentRecord) -> bool {
    record.last_status == Status::Error && record.last_error.as_deref() == Some(DENIED)
}

/// The attention reason, while attention is required.
fn unseen(record: &AgentRecord) -> Option<AttentionReason> {
    record
        .attention_reason
        .filter(|_| record.requires_attention)
}

/// The bucket of an agent (see the module's doc for the rule).
pub fn bucket(record: &AgentRecord, permission_pending: bool) -> Bucket {
    if permission_pending {
        Bucket::NeedsInput
    } else if denied(record) {
        Bucket::Done
    } else if record.last_status == Status::Error {
        Bucket::Failed
    } else if record.last_status.is_active() {
        Bucket::Running
    } else if record.requires_attention
        && !matches!(
            record.attention_reason,
            Some(AttentionReason::Permission | AttentionReason::Canceled)
        )
    {
        Bucket::Attention
    } else {
        Bucket::Done
    }
}

/// What an agent shows in the workspace its tree belongs to (its root's): a root agent its own
/// bucket; a subagent what the user must see or what still runs (needs you, failed, running,
/// queued), and `done` otherwise: a subagent's finished turn is its parent's to read (the
/// finish notice), not the user's. So every "needs you", "failed", "running" and "queued" the
/// status bar counts shows in exactly one workspace's row, count and home, and the inbox
/// (SPEC 19) lists the same agents.
pub fn tree_bucket(own: Bucket, root: bool) -> Bucket {
    match own {
        _ if root => own,
        Bucket::NeedsInput | Bucket::Failed | Bucket::Running | Bucket::Queued => own,
        Bucket::Attention | Bucket::Done => Bucket::Done,
    }
}

/// Whether an agent needs the user: a pending permission request or an unseen error.
pub fn needs_you(record: &AgentRecord, permission_pending: bool) -> bool {
    permission_pending || (unseen(record) == Some(AttentionReason::Error) && !denied(record))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::ids::{AgentId, Timestamp};

    /// A shell agent's record in `status` with `attention` (shared with `attention.rs`'s tests).
    pub(in crate::model) fn record(
        status: Status,
        attention: Option<AttentionReason>,
    ) -> AgentRecord {
        let mut r = AgentRecord::new(
            AgentId::new(),
            "shell".into(),
            "/".into(),
            status,
            Timestamp::from_millis(0),
        );
        r.requires_attention = attention.is_some();
        r.attention_reason = attention;
        r
    }

    #[test]
    fn the_rule_table() {
        use AttentionReason::{Canceled, Error as Err, Finished, Permission as Perm};
        use Bucket as B;
        use Status as S;
        // (status, attention, permission pending) → (bucket, needs you)
        let table = [
            ((S::Running, Some(Perm), true), (B::NeedsInput, true)),
            ((S::Running, None, true), (B::NeedsInput, true)),
            ((S::Error, Some(Err), false), (B::Failed, true)),
            ((S::Error, None, false), (B::Failed, false)),
            ((S::Initializing, None, false), (B::Running, false)),
            ((S::Running, None, false), (B::Running, false)),
            // An unseen error while a new turn runs (a notice woke it): running, still needs you.
            ((S::Running, Some(Err), false), (B::Running, true)),
            ((S::Running, Some(Finished), false), (B::Running, false)),
            ((S::Idle, Some(Finished), false), (B::Attention, false)),
            ((S::Closed, Some(Finished), false), (B::Attention, false)),
            // A canceled turn did not finish: not the green "finished".
            ((S::Idle, Some(Canceled), false), (B::Done, false)),
            ((S::Running, Some(Canceled), false), (B::Running, false)),
            // An interruption found at load (closed, reason error): look at it, it needs you.
            ((S::Closed, Some(Err), false), (B::Attention, true)),
            // A stale permission reason: nothing left to answer.
            ((S::Idle, Some(Perm), false), (B::Done, false)),
            ((S::Closed, Some(Perm), false), (B::Done, false)),
            ((S::Idle, None, false), (B::Done, false)),
            ((S::Closed, None, false), (B::Done, false)),
        ];
        for ((status, attention, pending), want) in table {
            let r = record(status, attention);
            let got = (bucket(&r, pending), needs_you(&r, pending));
            assert_eq!(got, want, "{status:?} {attention:?} pending={pending}");
        }
    }

    #[test]
    fn a_denied_turn_is_the_users_answer_not_a_failure() {
        let mut r = record(Status::Error, None);
        r.last_error = Some(DENIED.into());
        assert_eq!(
            (bucket(&r, false), needs_you(&r, false)),
            (Bucket::Done, false)
        );
        // A record an earlier version wrote, with the error's attention still required.
        r.requires_attention = true;
        r.attention_reason = Some(AttentionReason::Error);
        assert_eq!(
            (bucket(&r, false), needs_you(&r, false)),
            (Bucket::Done, false)
        );
        r.last_error = Some("exit 3".into());
        assert_eq!(
            (bucket(&r, false), needs_you(&r, false)),
            (Bucket::Failed, true)
        );
    }

    #[test]
    fn a_reason_without_required_attention_is_seen() {
        let mut r = record(Status::Closed, Some(AttentionReason::Error));
        r.requires_attention = false;
        assert_eq!(bucket(&r, false), Bucket::Done);
        assert!(!needs_you(&r, false));
    }

    #[test]
    fn buckets_serialize_in_snake_case_most_urgent_first() {
        for b in Bucket::ALL {
            assert_eq!(serde_json::to_value(b).unwrap(), b.as_str());
        }
        assert!(Bucket::ALL.windows(2).all(|w| w[0] < w[1]));
    }
}
