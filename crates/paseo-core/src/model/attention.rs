//! What an agent's row says, and which agents alert the user and why: both derived here,
//! once, from the one status rule ([`super::status`]), and shipped as values; the tray, desktop
//! notifications, the runtime's query and the window only render them.
//!
//! **The status word** (UI.md's status language): the bucket's word, refined where the state says
//! more: "starting" (initializing), "queued · 3rd" (its place for a live slot, SPEC 14), "needs
//! you: approve start" (a held start, SPEC 14), and for an agent with nothing to flag its literal
//! state: "idle", "closed" or "canceled" (an unseen canceled turn).
//!
//! **Alerts** (which agents deserve the user's attention), most urgent first:
//! - [`Alert::Permission`]: bucket `needs_input`, a pending permission request or held start (any
//!   agent, subagents too: only the user can answer it);
//! - [`Alert::Failed`]: any other agent that needs you, i.e. an error the user has not seen;
//! - [`Alert::Finished`]: a root agent in bucket `attention`, a finished turn the user has not seen
//!   (and that is not running again);
//! - [`Alert::SubagentFinished`]: the same of a subagent. Its finish goes to its parent (a finish
//!   notice) and its track, so it has no tray entry; a desktop notification only when the user
//!   asks for it.
//!
//! Archived agents never alert.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::agent::{AgentRecord, AttentionReason, Status};
use super::permission::PermissionRequest;
use super::status::Bucket;

/// The word of a held start (SPEC 14), wherever it is shown.
pub const APPROVE_START: &str = "needs you: approve start";
/// The word of a turn held because its tree used its budget (SPEC 18).
pub const BUDGET_WAIT: &str = "needs you: budget";

/// Why an agent alerts the user, most urgent first (the order of SPEC 6's buckets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Alert {
    Permission,
    Failed,
    Finished,
    SubagentFinished,
}

impl Alert {
    /// Whether the tray lists it (see the module's doc).
    pub fn in_tray(self) -> bool {
        self != Alert::SubagentFinished
    }

    /// The glyph of UI.md's status language (never colour alone).
    pub fn glyph(self) -> &'static str {
        match self {
            Alert::Permission => "◉",
            Alert::Failed => "✕",
            Alert::Finished | Alert::SubagentFinished => "✓",
        }
    }

    /// Its words, short: a held start says so.
    pub fn words(self, pending: Option<&PermissionRequest>) -> &'static str {
        match self {
            Alert::Permission if pending.is_some_and(PermissionRequest::is_held_start) => {
                APPROVE_START
            }
            Alert::Permission if pending.is_some_and(PermissionRequest::is_budget) => BUDGET_WAIT,
            Alert::Permission => "needs permission",
            Alert::Failed => "failed",
            Alert::Finished | Alert::SubagentFinished => "finished",
        }
    }
}

/// Whether (and why) an agent alerts the user, from what the status rule says of it
/// (`bucket`, `needs_you`), whether it is archived and whether it is a root agent.
pub fn alert(archived: bool, root: bool, bucket: Bucket, needs_you: bool) -> Option<Alert> {
    if archived {
        return None;
    }
    match bucket {
        Bucket::NeedsInput => Some(Alert::Permission),
        // What needs the user besides a pending permission is an unseen error.
        _ if needs_you => Some(Alert::Failed),
        Bucket::Attention if root => Some(Alert::Finished),
        Bucket::Attention => Some(Alert::SubagentFinished),
        // A stale permission reason (its request went away with the process) is `done`:
        // nothing is left to answer.
        _ => None,
    }
}

/// The bucket's own word (what a workspace row or a count says).
pub fn bucket_word(bucket: Bucket) -> &'static str {
    match bucket {
        Bucket::NeedsInput => "needs you",
        Bucket::Failed => "failed",
        Bucket::Running => "running",
        Bucket::Attention => "finished",
        Bucket::Queued => "queued",
        Bucket::Done => "idle",
    }
}

/// The bucket's glyph (UI.md's status language: never colour alone, the glyph and the word say
/// the same).
pub fn bucket_glyph(bucket: Bucket) -> &'static str {
    match bucket {
        Bucket::NeedsInput => "◉",
        Bucket::Failed => "✕",
        Bucket::Running => "●",
        Bucket::Attention => "✓",
        Bucket::Queued => "◌",
        Bucket::Done => "○",
    }
}

/// The looks that are not buckets (see [`look`]): their glyph and word. Grey like every idle
/// state; only the glyph and the word differ.
const OTHER_LOOKS: [(&str, &str, &str); 2] =
    [("canceled", "⊘", "canceled"), ("denied", "⊘", "denied")];

/// What a workspace or a filter with nothing going on says.
pub const NO_ACTIVITY: &str = "no activity";

/// One look's glyph and word.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LookWords {
    pub glyph: &'static str,
    pub word: &'static str,
}

/// The whole status language (UI.md), as the clients draw it: every look's glyph and word, the
/// buckets in SPEC 6's urgency order, and the words for nothing going on. Shipped to the window
/// at start (its app info) so the page holds none of it: a look the page draws is a name this
/// table gives a glyph and a word.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusLanguage {
    /// Look name (a bucket's, `canceled` or `denied`) → its glyph and word.
    pub looks: std::collections::BTreeMap<&'static str, LookWords>,
    /// Bucket names, most urgent first.
    pub urgency: Vec<&'static str>,
    /// What a workspace with no agent contributing anything says.
    pub no_activity: &'static str,
}

/// The status language (see [`StatusLanguage`]).
pub fn status_language() -> StatusLanguage {
    let mut looks: std::collections::BTreeMap<_, _> = Bucket::ALL
        .iter()
        .map(|b| {
            (
                b.as_str(),
                LookWords {
                    glyph: bucket_glyph(*b),
                    word: bucket_word(*b),
                },
            )
        })
        .collect();
    for (name, glyph, word) in OTHER_LOOKS {
        looks.insert(name, LookWords { glyph, word });
    }
    StatusLanguage {
        looks,
        urgency: Bucket::ALL.iter().map(Bucket::as_str).collect(),
        no_activity: NO_ACTIVITY,
    }
}

/// An unseen canceled turn: `done` wherever buckets count, but it did not finish, so its row
/// says "canceled" (and the window gives it its own glyph).
pub fn canceled_unseen(record: &AgentRecord) -> bool {
    record.requires_attention && record.attention_reason == Some(AttentionReason::Canceled)
}

/// What an agent's glyph and colour show (UI.md's status language): its bucket's name, or
/// "canceled" for an unseen canceled turn. Not a bucket: it is `done` wherever buckets count
/// (SPEC 6 has no canceled bucket); only its glyph and word differ, so a canceled turn never
/// reads "finished". `bucket` is the agent's own (the engine's, queued included).
pub fn look(record: &AgentRecord, bucket: Bucket) -> &'static str {
    match bucket {
        Bucket::Done if canceled_unseen(record) => "canceled",
        Bucket::Done if super::status::denied(record) => "denied",
        b => b.as_str(),
    }
}

/// The word an agent's row, tab and header show (see the module's doc). `bucket` is its own
/// bucket (the engine's, queued included), `queue_place` its place for a live slot.
pub fn status_word(
    record: &AgentRecord,
    bucket: Bucket,
    pending: Option<&PermissionRequest>,
    queue_place: Option<usize>,
) -> Cow<'static, str> {
    match bucket {
        // An archived agent says the status it was archived in (its row in the list of what was
        // archived together), a failed turn "failed" even after the archive closed its session.
        _ if record.is_archived() => match record.last_status {
            _ if record.last_error.is_some() => Cow::Borrowed("failed"),
            Status::Error => Cow::Borrowed("failed"),
            s => Cow::Borrowed(s.as_str()),
        },
        Bucket::Queued => match queue_place {
            Some(n) if n > 0 => Cow::Owned(format!("queued · {}", ordinal(n))),
            _ => Cow::Borrowed("queued"),
        },
        Bucket::Running if record.last_status == Status::Initializing => Cow::Borrowed("starting"),
        Bucket::Done if canceled_unseen(record) => Cow::Borrowed("canceled"),
        Bucket::Done if super::status::denied(record) => Cow::Borrowed("denied"),
        Bucket::Done if record.last_status == Status::Closed => Cow::Borrowed("closed"),
        Bucket::NeedsInput if pending.is_some_and(PermissionRequest::is_held_start) => {
            Cow::Borrowed(APPROVE_START)
        }
        Bucket::NeedsInput if pending.is_some_and(PermissionRequest::is_budget) => {
            Cow::Borrowed(BUDGET_WAIT)
        }
        b => Cow::Borrowed(bucket_word(b)),
    }
}

/// What a person calls an agent (messages, confirms, lists): its title, else its provider and
/// the start of its id ("shell 9edbfba6"), never a whole UUID.
pub fn display_name(title: &str, provider: &str, id: super::AgentId) -> String {
    let title = title.trim();
    if title.is_empty() {
        let id = id.to_string();
        format!("{provider} {}", &id[..8.min(id.len())])
    } else {
        title.to_string()
    }
}

/// A root agent's subagents rolled up (its unarchived descendants), as its row in the workspace
/// home shows them: the words, and the buckets they show in its workspace besides done (what the
/// home's filter and status sort read for the row, [`super::tree_bucket`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subagents {
    /// "12 subagents: 3 running, 1 failed": how many, then each bucket but done that has any,
    /// most urgent first.
    pub word: String,
    /// Most urgent first; empty when they are all done (or finished: their parent's to read).
    pub shows: Vec<Bucket>,
}

impl Subagents {
    /// From how many subagents are in each bucket (their own); none when there are none.
    pub fn of(counts: &[u32; Bucket::COUNT]) -> Option<Subagents> {
        let total: u32 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        let has = |b: &Bucket| counts[b.index()] > 0;
        let parts: Vec<String> = Bucket::ALL
            .iter()
            .filter(|b| **b != Bucket::Done && has(b))
            .map(|b| format!("{} {}", counts[b.index()], bucket_word(*b)))
            .collect();
        let head = format!("{total} subagent{}", if total == 1 { "" } else { "s" });
        Some(Subagents {
            word: match parts.is_empty() {
                true => head,
                false => format!("{head}: {}", parts.join(", ")),
            },
            shows: Bucket::ALL
                .into_iter()
                .filter(|b| has(b) && super::tree_bucket(*b, false) != Bucket::Done)
                .collect(),
        })
    }
}

/// The agent's [`display_name`] when its title as it is is not that name (none, or spaces around
/// it): what its card and snapshot carry as `name` beside the title, so every client names it
/// by this one rule and a titled fleet's answers do not grow by a copy of every title.
pub fn name_beyond_title(record: &AgentRecord) -> Option<String> {
    let name = display_name(&record.title, &record.provider, record.id);
    (name != record.title).then_some(name)
}

/// 1st, 2nd, 3rd, 4th, … 11th, 12th, 13th, 21st.
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::permission::PermissionKind;
    use crate::model::status::tests::record;
    use crate::model::status::{bucket, needs_you};

    fn request(kind: PermissionKind) -> PermissionRequest {
        PermissionRequest {
            kind,
            ..PermissionRequest::tool("r", "Bash", serde_json::json!({}))
        }
    }

    #[test]
    fn the_status_language_names_every_look_the_engine_can_give() {
        let language = status_language();
        // Every bucket, in SPEC 6's order, and each look `look` returns.
        assert_eq!(
            language.urgency,
            [
                "needs_input",
                "failed",
                "running",
                "attention",
                "queued",
                "done"
            ]
        );
        for name in language.urgency.iter().chain(["canceled", "denied"].iter()) {
            let words = &language.looks[name];
            assert!(!words.glyph.is_empty() && !words.word.is_empty(), "{name}");
        }
        assert_eq!(language.looks.len(), 8);
        assert_eq!(language.looks["needs_input"].word, "needs you");
        assert_eq!(language.looks["attention"].word, "finished");
        // The buckets' glyphs tell them apart without colour.
        let glyphs: std::collections::BTreeSet<_> =
            Bucket::ALL.iter().map(|b| bucket_glyph(*b)).collect();
        assert_eq!(glyphs.len(), Bucket::COUNT);
        let json = serde_json::to_value(&language).unwrap();
        assert_eq!(json["noActivity"], "no activity");
        assert_eq!(json["looks"]["canceled"]["glyph"], "⊘");
    }

    #[test]
    fn the_alert_table() {
        use Alert as C;
        use AttentionReason::{Canceled, Error as Err, Finished, Permission as Perm};
        use Status as S;
        // (status, attention, pending, archived, root) → call
        let table = [
            (
                (S::Running, Some(Perm), true, false, false),
                Some(C::Permission),
            ),
            (
                (S::Running, Some(Perm), true, false, true),
                Some(C::Permission),
            ),
            ((S::Error, Some(Err), false, false, false), Some(C::Failed)),
            // An interruption found at load: it needs you, so it reads failed.
            ((S::Closed, Some(Err), false, false, true), Some(C::Failed)),
            ((S::Running, Some(Err), false, false, true), Some(C::Failed)),
            (
                (S::Idle, Some(Finished), false, false, true),
                Some(C::Finished),
            ),
            (
                (S::Idle, Some(Finished), false, false, false),
                Some(C::SubagentFinished),
            ),
            // Seen, running again, canceled, stale, archived: no alert.
            ((S::Error, None, false, false, true), None),
            ((S::Running, Some(Finished), false, false, true), None),
            ((S::Idle, Some(Canceled), false, false, true), None),
            ((S::Idle, Some(Perm), false, false, true), None),
            ((S::Error, Some(Err), false, true, true), None),
            ((S::Running, Some(Perm), true, true, true), None),
        ];
        for ((status, attention, pending, archived, root), want) in table {
            let r = record(status, attention);
            let got = alert(archived, root, bucket(&r, pending), needs_you(&r, pending));
            assert_eq!(
                got, want,
                "{status:?} {attention:?} pending={pending} root={root}"
            );
        }
        assert!([C::Permission, C::Failed, C::Finished]
            .iter()
            .all(|c| c.in_tray()));
        assert!(!C::SubagentFinished.in_tray());
        assert!(C::Permission < C::Failed && C::Failed < C::Finished);
    }

    #[test]
    fn a_held_start_is_worded_once() {
        let held = request(PermissionKind::HeldStart);
        let tool = request(PermissionKind::Tool);
        assert_eq!(Alert::Permission.words(Some(&held)), APPROVE_START);
        assert_eq!(Alert::Permission.words(Some(&tool)), "needs permission");
        let r = record(Status::Idle, Some(AttentionReason::Permission));
        assert_eq!(
            status_word(&r, Bucket::NeedsInput, Some(&held), None),
            APPROVE_START
        );
        assert_eq!(
            status_word(&r, Bucket::NeedsInput, Some(&tool), None),
            "needs you"
        );
    }

    /// A turn held by its tree's budget (SPEC 18) needs the user like any request, in the
    /// tray too, and says why.
    #[test]
    fn a_budget_hold_needs_you_and_says_budget() {
        let held = request(PermissionKind::Budget);
        let r = record(Status::Idle, Some(AttentionReason::Permission));
        let b = bucket(&r, true);
        assert_eq!(b, Bucket::NeedsInput);
        let a = alert(false, false, b, needs_you(&r, true));
        assert_eq!(a, Some(Alert::Permission));
        assert!(a.is_some_and(Alert::in_tray));
        assert_eq!(Alert::Permission.words(Some(&held)), BUDGET_WAIT);
        assert_eq!(status_word(&r, b, Some(&held), None), BUDGET_WAIT);
    }

    #[test]
    fn the_status_words() {
        use Status as S;
        let word = |status, attention, b, place| {
            status_word(&record(status, attention), b, None, place).into_owned()
        };
        assert_eq!(
            word(S::Initializing, None, Bucket::Running, None),
            "starting"
        );
        assert_eq!(word(S::Running, None, Bucket::Running, None), "running");
        assert_eq!(
            word(S::Initializing, None, Bucket::Queued, Some(3)),
            "queued · 3rd"
        );
        assert_eq!(word(S::Initializing, None, Bucket::Queued, None), "queued");
        assert_eq!(
            word(S::Idle, Some(AttentionReason::Canceled), Bucket::Done, None),
            "canceled"
        );
        assert_eq!(word(S::Closed, None, Bucket::Done, None), "closed");
        assert_eq!(word(S::Idle, None, Bucket::Done, None), "idle");
        assert_eq!(
            word(
                S::Idle,
                Some(AttentionReason::Finished),
                Bucket::Attention,
                None
            ),
            "finished"
        );
        assert_eq!(
            word(S::Error, Some(AttentionReason::Error), Bucket::Failed, None),
            "failed"
        );
    }

    #[test]
    fn an_unseen_canceled_turn_looks_canceled_only_while_idle() {
        use AttentionReason::{Canceled, Finished};
        let canceled = record(Status::Idle, Some(Canceled));
        assert_eq!(look(&canceled, bucket(&canceled, false)), "canceled");
        assert_eq!(look(&canceled, Bucket::Done), "canceled");
        // Running again, or needing the user, it shows that bucket.
        assert_eq!(look(&canceled, Bucket::Running), "running");
        assert_eq!(look(&canceled, Bucket::NeedsInput), "needs_input");
        // Seen: the attention is cleared, it is plain idle.
        let seen = record(Status::Idle, None);
        assert_eq!(look(&seen, bucket(&seen, false)), "done");
        let finished = record(Status::Idle, Some(Finished));
        assert_eq!(look(&finished, bucket(&finished, false)), "attention");
        let failed = record(Status::Error, Some(AttentionReason::Error));
        assert_eq!(look(&failed, bucket(&failed, false)), "failed");
    }

    #[test]
    fn an_archived_agent_says_the_status_it_was_archived_in() {
        use crate::model::Timestamp;
        let word = |status, error: Option<&str>| {
            let mut r = record(status, None);
            r.last_error = error.map(String::from);
            r.archived_at = Some(Timestamp::from_millis(1));
            status_word(&r, bucket(&r, false), None, None).into_owned()
        };
        assert_eq!(word(Status::Idle, None), "idle");
        assert_eq!(word(Status::Closed, None), "closed");
        assert_eq!(word(Status::Error, None), "failed");
        // Archiving closed the session of a turn that had failed: still "failed".
        assert_eq!(word(Status::Closed, Some("exit 3")), "failed");
    }

    #[test]
    fn an_untitled_agent_is_named_by_its_provider_and_id_and_a_titled_one_by_its_title() {
        let mut r = record(Status::Idle, None);
        let id = r.id.to_string();
        assert_eq!(
            name_beyond_title(&r).as_deref(),
            Some(format!("shell {}", &id[..8]).as_str())
        );
        r.title = "fix the login form".into();
        assert_eq!(name_beyond_title(&r), None, "the title is the name");
        r.title = "  padded ".into();
        assert_eq!(name_beyond_title(&r).as_deref(), Some("padded"));
    }

    #[test]
    fn a_roots_subagents_roll_up_in_urgency_order_without_the_done() {
        let mut c = [0u32; Bucket::COUNT];
        assert_eq!(Subagents::of(&c), None);
        c[Bucket::Done.index()] = 8;
        c[Bucket::Running.index()] = 2;
        c[Bucket::Failed.index()] = 1;
        c[Bucket::Attention.index()] = 1;
        let s = Subagents::of(&c).unwrap();
        assert_eq!(s.word, "12 subagents: 1 failed, 2 running, 1 finished");
        // A finished subagent is its parent's to read: the workspace shows it done.
        assert_eq!(s.shows, vec![Bucket::Failed, Bucket::Running]);
        let one = Subagents::of(&[0, 0, 0, 0, 0, 1]).unwrap();
        assert_eq!((one.word.as_str(), one.shows.len()), ("1 subagent", 0));
    }

    #[test]
    fn ordinals() {
        let said: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112]
            .into_iter()
            .map(ordinal)
            .collect();
        assert_eq!(
            said,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "101st", "111th", "112th"
            ]
        );
    }
}
