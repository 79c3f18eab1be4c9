//! An agent's durable record (SPEC 1) and the values in it: lifecycle status (SPEC 2),
//! attention, provider settings, resume state and a finish-notice arm (SPEC 4).
//!
//! The record keeps the fields it does not know in `extra` (flattened), so a record written by a
//! newer version or by upstream survives a rewrite by us.

use std::fmt;
use std::str::FromStr;

use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::budget::Budget;
pub use super::config::{AgentConfig, SharedConfig};
use super::config::{AgentConfigVisitor, SkippedStr};
use super::held::HeldTurn;
use super::ids::{AgentId, BatchId, Extra, Key, Timestamp, WorkspaceId};
use super::labels::Labels;
use super::turn::WaitingPrompt;
use super::usage::{LastRun, RecordUsage};

/// The label that links a subagent to its parent.
pub const PARENT_LABEL: &str = super::compact::PARENT_KEY;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Initializing,
    Idle,
    Running,
    Error,
    Closed,
}

impl Status {
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Initializing => "initializing",
            Status::Idle => "idle",
            Status::Running => "running",
            Status::Error => "error",
            Status::Closed => "closed",
        }
    }
    /// Running or about to run: what the UI shows as "running" and what a confirm protects.
    pub fn is_active(&self) -> bool {
        matches!(self, Status::Initializing | Status::Running)
    }
}

impl FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "initializing" => Status::Initializing,
            "idle" => Status::Idle,
            "running" => Status::Running,
            "error" => Status::Error,
            "closed" => Status::Closed,
            other => {
                return Err(format!(
                "unknown status {other:?} (expected initializing, idle, running, error or closed)"
            ))
            }
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttentionReason {
    Finished,
    Error,
    Permission,
    /// The turn was canceled (SPEC 2: it ends idle, like a finish, but it did not finish).
    Canceled,
}

impl AttentionReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            AttentionReason::Finished => "finished",
            AttentionReason::Error => "error",
            AttentionReason::Permission => "permission",
            AttentionReason::Canceled => "canceled",
        }
    }
}

/// What a provider needs to resume a session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Persistence {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The turn that will send a finish notice to `target` when it ends (SPEC 4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotifyArm {
    /// Unique per armed turn: the id of the notice it will send, so a notice re-derived after a
    /// crash is recognised as the same one.
    pub id: String,
    pub target_agent_id: AgentId,
    /// The armed turn's number (`turnCount` after it started); 0 while it has not started yet.
    #[serde(default)]
    pub turn: u64,
}

impl NotifyArm {
    pub fn new(target: AgentId) -> NotifyArm {
        NotifyArm {
            id: Uuid::new_v4().to_string(),
            target_agent_id: target,
            turn: 0,
        }
    }
}

/// One agent, as stored in `$PASEO_HOME/agents/{cwd-with-dashes}/{id}.json`.
///
/// Every agent's record stays in memory (docs/scale.md): the optional parts most
/// records lack (resume state, a held turn, a finish-notice arm, a last run, usage) are boxed, so their
/// absence costs a pointer, not their size.
// Deserialize is written by hand below: the derived one with `flatten` buffers every field of
// every record before reading it, several times slower at load (docs/scale.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRecord {
    pub id: AgentId,
    /// Inline: provider ids are short, and a `String` of one was an allocation per record.
    pub provider: CompactString,
    /// Inline when short; as long as a `String` otherwise.
    pub cwd: CompactString,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<WorkspaceId>,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub labels: Labels,
    pub last_status: Status,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_message_at: Option<Timestamp>,
    #[serde(default)]
    pub config: SharedConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistence: Option<Box<Persistence>>,
    #[serde(default)]
    pub requires_attention: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_reason: Option<AttentionReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_timestamp: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<Timestamp>,
    #[serde(default)]
    pub auto_archive: bool,
    #[serde(default)]
    pub notify_on_finish: bool,
    // --- Paseo Desktop additions (unknown to upstream, preserved by it as we preserve its) ---
    /// The agent that created this one, for subagents and detached agents alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<AgentId>,
    /// The archive gesture this agent was archived in; restore brings back the whole batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_batch_id: Option<BatchId>,
    /// A worktree workspace created by the same request that created this agent (autoArchive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_workspace_id: Option<WorkspaceId>,
    /// A pending finish notice: the turn it arms and who receives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_arm: Option<Box<NotifyArm>>,
    /// Last assistant text (or output tail) of the latest turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message: Option<String>,
    /// Set for an agent loaded at rest whose last message was left in its record file (as its
    /// system prompt is, [`AgentConfig::system_prompt_on_disk`]; `last_message` is `None`
    /// meanwhile): a turn's text can be kilobytes, and no list, card or event shows it.
    /// Whatever sets `last_message` clears this; whoever needs the text reads it back.
    #[serde(skip)]
    pub last_message_on_disk: bool,
    /// Number of turns started so far.
    #[serde(default)]
    pub turn_count: u64,
    /// Whether autoArchive already fired (it fires once, on the first terminal turn event).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_archive_done: bool,
    /// A turn held until the user allows it (SPEC 14): it gave its caller more power.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_turn: Option<Box<HeldTurn>>,
    /// A prompt waiting for its session (SPEC 15): it runs after a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_prompt: Option<Box<WaitingPrompt>>,
    /// Tokens and cost of its turns, as its CLI reported them (model agents).
    #[serde(default, skip_serializing_if = "RecordUsage::is_empty")]
    pub usage: RecordUsage,
    /// Wall time and exit code of its last turn (shell and command agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<Box<LastRun>>,
    /// The cap on its tree's usage (SPEC 18); absent: none of its own (a budget above it may
    /// still apply). Boxed: few agents have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Box<Budget>>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl<'de> Deserialize<'de> for AgentRecord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(AgentRecordVisitor { at_rest: false })
            .map(|r| *r)
    }
}

impl AgentRecord {
    /// Parses a record straight into its own allocation: the load path keeps every record
    /// boxed from the parse to the engine, so ≈ 1 KB is never copied from one place to the
    /// next (a 100,000-record load spent a third of its time doing that, page faults included).
    pub fn from_json_boxed(bytes: &[u8]) -> serde_json::Result<Box<AgentRecord>> {
        Self::parse_boxed(bytes, false)
    }

    /// [`AgentRecord::from_json_boxed`] for an agent loaded at rest: its system prompt stays in
    /// its file ([`AgentConfig::system_prompt_on_disk`]). Validates exactly what a whole read
    /// validates, so a record loads at rest only if it could be read back whole.
    /// Its last message stays in the file too, unless a finish notice is armed: a turn a crash
    /// cut off tells its parent at load, with that text (rare: read whole then).
    pub fn from_json_at_rest(bytes: &[u8]) -> serde_json::Result<Box<AgentRecord>> {
        let mut r = Self::parse_boxed(bytes, true)?;
        if r.last_message_on_disk && r.notify_arm.is_some() {
            r.last_message = Self::parse_boxed(bytes, false)?.last_message;
            r.last_message_on_disk = false;
        }
        Ok(r)
    }

    /// Whether part of it (system prompt, last message) was left in its record file.
    pub fn has_parts_on_disk(&self) -> bool {
        self.config.system_prompt_on_disk || self.last_message_on_disk
    }

    /// Its config to change: its own copy from here on, the shared one stays as the other
    /// agents have it ([`SharedConfig`]).
    pub fn config_mut(&mut self) -> &mut AgentConfig {
        std::sync::Arc::make_mut(&mut self.config)
    }

    /// Takes back the parts left in its file from `whole`, the same agent's record as read from
    /// that file.
    pub fn take_parts_on_disk(&mut self, whole: &mut AgentRecord) {
        if self.config.system_prompt_on_disk {
            let config = self.config_mut();
            config.system_prompt = whole.config_mut().system_prompt.take();
            config.system_prompt_on_disk = false;
        }
        if self.last_message_on_disk {
            self.last_message = whole.last_message.take();
            self.last_message_on_disk = false;
        }
    }

    fn parse_boxed(bytes: &[u8], at_rest: bool) -> serde_json::Result<Box<AgentRecord>> {
        let mut d = serde_json::Deserializer::from_slice(bytes);
        let r = d.deserialize_map(AgentRecordVisitor { at_rest })?;
        d.end()?;
        Ok(r)
    }
}

struct AgentRecordVisitor {
    at_rest: bool,
}

impl<'de> serde::de::Visitor<'de> for AgentRecordVisitor {
    type Value = Box<AgentRecord>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an agent record (a JSON object)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Box<AgentRecord>, A::Error> {
        use serde::de::Error;
        let mut id = None;
        let mut provider = None;
        let mut cwd = None;
        let mut last_status = None;
        let mut created_at = None;
        let mut updated_at = None;
        // The optional fields go straight into a record; the required ones replace its
        // placeholders at the end, once they are known to be there.
        let mut r = Box::new(AgentRecord::new(
            AgentId::PLACEHOLDER,
            String::new(),
            String::new(),
            Status::Closed,
            Timestamp::from_millis(0),
        ));
        // Keys are borrowed from the input; an escaped key arrives owned.
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match key.as_ref() {
                "id" => id = Some(map.next_value()?),
                "provider" => provider = Some(map.next_value()?),
                "cwd" => cwd = Some(map.next_value()?),
                "lastStatus" => last_status = Some(map.next_value()?),
                "createdAt" => created_at = Some(map.next_value()?),
                "updatedAt" => updated_at = Some(map.next_value()?),
                "workspaceId" => r.workspace_id = map.next_value()?,
                "title" => r.title = map.next_value::<Option<String>>()?.unwrap_or_default(),
                "labels" => r.labels = map.next_value::<Option<_>>()?.unwrap_or_default(),
                "lastActivityAt" => r.last_activity_at = map.next_value()?,
                "lastUserMessageAt" => r.last_user_message_at = map.next_value()?,
                "config" => {
                    r.config = map
                        .next_value_seed(AgentConfigVisitor {
                            at_rest: self.at_rest,
                        })?
                        .shared()
                }
                "persistence" => r.persistence = map.next_value()?,
                "requiresAttention" => {
                    r.requires_attention = map.next_value::<Option<bool>>()?.unwrap_or_default()
                }
                "attentionReason" => r.attention_reason = map.next_value()?,
                "attentionTimestamp" => r.attention_timestamp = map.next_value()?,
                "lastError" => r.last_error = map.next_value()?,
                "archivedAt" => r.archived_at = map.next_value()?,
                "autoArchive" => {
                    r.auto_archive = map.next_value::<Option<bool>>()?.unwrap_or_default()
                }
                "notifyOnFinish" => {
                    r.notify_on_finish = map.next_value::<Option<bool>>()?.unwrap_or_default()
                }
                "createdBy" => r.created_by = map.next_value()?,
                "archiveBatchId" => r.archive_batch_id = map.next_value()?,
                "createdWorkspaceId" => r.created_workspace_id = map.next_value()?,
                "notifyArm" => r.notify_arm = map.next_value()?,
                "lastMessage" if self.at_rest => {
                    r.last_message = None;
                    r.last_message_on_disk = map.next_value::<Option<SkippedStr>>()?.is_some();
                }
                "lastMessage" => r.last_message = map.next_value()?,
                "turnCount" => r.turn_count = map.next_value::<Option<u64>>()?.unwrap_or_default(),
                "autoArchiveDone" => {
                    r.auto_archive_done = map.next_value::<Option<bool>>()?.unwrap_or_default()
                }
                "heldTurn" => r.held_turn = map.next_value()?,
                "waitingPrompt" => r.waiting_prompt = map.next_value()?,
                "usage" => r.usage = map.next_value::<Option<_>>()?.unwrap_or_default(),
                "lastRun" => r.last_run = map.next_value()?,
                "budget" => r.budget = map.next_value()?,
                _ => {
                    let v: Value = map.next_value()?;
                    r.extra.insert(key.into_owned(), v);
                }
            }
        }
        r.id = id.ok_or_else(|| A::Error::missing_field("id"))?;
        r.provider = provider.ok_or_else(|| A::Error::missing_field("provider"))?;
        r.cwd = cwd.ok_or_else(|| A::Error::missing_field("cwd"))?;
        r.last_status = last_status.ok_or_else(|| A::Error::missing_field("lastStatus"))?;
        r.created_at = created_at.ok_or_else(|| A::Error::missing_field("createdAt"))?;
        r.updated_at = updated_at.ok_or_else(|| A::Error::missing_field("updatedAt"))?;
        Ok(r)
    }
}

impl AgentRecord {
    /// A record with its required fields and every other field as a record without them reads
    /// (empty, false, zero).
    pub fn new(
        id: AgentId,
        provider: String,
        cwd: String,
        last_status: Status,
        now: Timestamp,
    ) -> AgentRecord {
        AgentRecord {
            id,
            provider: provider.into(),
            cwd: cwd.into(),
            workspace_id: None,
            title: String::new(),
            labels: Labels::new(),
            last_status,
            created_at: now,
            updated_at: now,
            last_activity_at: None,
            last_user_message_at: None,
            config: AgentConfig::default().shared(),
            persistence: None,
            requires_attention: false,
            attention_reason: None,
            attention_timestamp: None,
            last_error: None,
            archived_at: None,
            auto_archive: false,
            notify_on_finish: false,
            created_by: None,
            archive_batch_id: None,
            created_workspace_id: None,
            notify_arm: None,
            last_message: None,
            last_message_on_disk: false,
            turn_count: 0,
            auto_archive_done: false,
            held_turn: None,
            waiting_prompt: None,
            usage: RecordUsage::default(),
            last_run: None,
            budget: None,
            extra: Extra::new(),
        }
    }

    /// Takes its finish-notice arm out (the turn it armed ended or was cut off).
    pub fn take_notify_arm(&mut self) -> Option<NotifyArm> {
        self.notify_arm.take().map(|a| *a)
    }

    /// The parent link as an id; a label that is not a UUID yields `None` (reported at load).
    pub fn parent_agent_id(&self) -> Option<AgentId> {
        self.labels.get(PARENT_LABEL).and_then(|s| s.parse().ok())
    }
    pub fn set_parent(&mut self, parent: Option<AgentId>) {
        match parent {
            Some(p) => self.labels.insert(PARENT_LABEL.to_string(), p.to_string()),
            None => self.labels.remove(PARENT_LABEL),
        };
    }
    pub fn is_archived(&self) -> bool {
        self.archived_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every agent's record stays in memory (docs/scale.md): what each field costs
    /// is measured, and a new field that is not boxed or shared shows here first.
    #[test]
    fn a_record_in_memory_stays_small() {
        // `unconfined` (SPEC 16) lives in the shared config, where it costs a record nothing;
        // the budget (SPEC 18) and a prompt waiting for its session (SPEC 15) are boxed
        // pointers, null for all but a few agents (8 bytes each: 0.8 MB at 100,000 agents).
        let size = std::mem::size_of::<AgentRecord>();
        assert!(size <= 352, "{size}");
    }

    #[test]
    fn record_preserves_unknown_fields_and_exposes_parent() {
        let json = r#"{
            "id": "2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d",
            "provider": "claude",
            "cwd": "/home/me/src/app",
            "title": "lead",
            "labels": {"paseo.parent-agent-id": "0b6c2a3e-1111-4222-8333-444455556666", "x": "y"},
            "lastStatus": "idle",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
            "config": {"model": "sonnet", "futureKnob": 3},
            "usage": {"inputTokens": 12, "outputTokens": 3, "costUsd": 0.04, "turns": 2, "futureCount": 7},
            "lastRun": {"wallMs": 1500, "exitCode": 2},
            "futureField": {"nested": [1, 2]}
        }"#;
        let rec: AgentRecord = serde_json::from_str(json).unwrap();
        assert_eq!(
            rec.parent_agent_id().map(|p| p.to_string()).as_deref(),
            Some("0b6c2a3e-1111-4222-8333-444455556666")
        );
        let out = serde_json::to_value(&rec).unwrap();
        assert_eq!(out["futureField"]["nested"][1], 2);
        assert_eq!(out["config"]["futureKnob"], 3);
        assert_eq!((rec.usage.input_tokens, rec.usage.turns), (12, 2));
        assert_eq!(rec.last_run.as_ref().and_then(|r| r.exit_code), Some(2));
        assert_eq!(out["usage"]["futureCount"], 7);
        assert_eq!(out["usage"]["costUsd"], 0.04);
        assert_eq!(out["lastRun"]["wallMs"], 1500);
        assert_eq!(out["lastStatus"], "idle");
        assert_eq!(out["createdAt"], "2026-01-01T00:00:00.000Z");
        let again: AgentRecord = serde_json::from_value(out).unwrap();
        assert_eq!(again, rec);
    }

    #[test]
    fn config_reads_its_fields_and_keeps_unknown_ones_whatever_their_keys() {
        // An escaped key (owned while read) and null values read as they did with flatten.
        let json = r#"{"model": "opus", "mode": null, "system\u0050rompt": "be brief",
            "futureKnob": {"a": [1]}, "nothing": null}"#;
        let c: AgentConfig = serde_json::from_str(json).unwrap();
        assert_eq!(c.model.as_deref(), Some("opus"));
        assert_eq!(c.mode, None);
        assert_eq!(c.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(
            c.extra.get("futureKnob"),
            Some(&serde_json::json!({"a": [1]}))
        );
        assert_eq!(c.extra.get("nothing"), Some(&Value::Null));
        let out = serde_json::to_value(&c).unwrap();
        assert_eq!(serde_json::from_value::<AgentConfig>(out).unwrap(), c);
        assert_eq!(
            serde_json::from_str::<AgentConfig>("{}").unwrap(),
            AgentConfig::default()
        );
        for bad in [r#"{"model": 3}"#, "[]", r#""opus""#] {
            assert!(serde_json::from_str::<AgentConfig>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_record_read_at_rest_leaves_its_system_prompt_in_the_file_and_is_checked_the_same() {
        let rec = |config: &str| {
            format!(
                r#"{{"id": "0b6c2a3e-1111-4222-8333-444455556666", "provider": "claude",
                "cwd": "/w", "lastStatus": "idle", "createdAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-01-01T00:00:00Z", "config": {config}}}"#
            )
        };
        let prompt = rec(r#"{"model": "opus", "system\u0050rompt": "be \"brief\"", "k": 1}"#);
        let rest = AgentRecord::from_json_at_rest(prompt.as_bytes()).unwrap();
        let whole = AgentRecord::from_json_boxed(prompt.as_bytes()).unwrap();
        assert_eq!(whole.config.system_prompt.as_deref(), Some("be \"brief\""));
        assert!(!whole.config.system_prompt_on_disk);
        assert_eq!(rest.config.system_prompt, None);
        assert!(rest.config.system_prompt_on_disk);
        // Everything else reads as a whole read does.
        let mut back = rest.clone();
        let config = back.config_mut();
        config.system_prompt = whole.config.system_prompt.clone();
        config.system_prompt_on_disk = false;
        assert_eq!(back, whole);
        // No prompt, or null, or no config: nothing was left in the file.
        for config in [r#"{"model": "opus"}"#, r#"{"systemPrompt": null}"#, "null"] {
            let r = AgentRecord::from_json_at_rest(rec(config).as_bytes()).unwrap();
            assert!(!r.config.system_prompt_on_disk, "{config}");
            assert_eq!(
                *r,
                *AgentRecord::from_json_boxed(rec(config).as_bytes()).unwrap()
            );
        }
        // A prompt that is not a string fails at rest exactly as it fails whole.
        for bad in [r#"{"systemPrompt": 3}"#, r#"{"systemPrompt": ["x"]}"#, "[]"] {
            assert!(
                AgentRecord::from_json_at_rest(rec(bad).as_bytes()).is_err(),
                "{bad}"
            );
            assert!(
                AgentRecord::from_json_boxed(rec(bad).as_bytes()).is_err(),
                "{bad}"
            );
        }
        // Its last message too, unless a finish notice is armed (the load may owe it).
        let msg = |arm: &str| {
            rec(r#"{}"#).replacen(
                "\"config\"",
                &format!(r#""lastMessage": "done", {arm} "config""#),
                1,
            )
        };
        let r = AgentRecord::from_json_at_rest(msg("").as_bytes()).unwrap();
        assert_eq!(
            (r.last_message.as_deref(), r.last_message_on_disk),
            (None, true)
        );
        let armed = msg(
            r#""notifyArm": {"id": "n1", "targetAgentId": "0b6c2a3e-1111-4222-8333-444455556666"},"#,
        );
        let r = AgentRecord::from_json_at_rest(armed.as_bytes()).unwrap();
        assert_eq!(
            (r.last_message.as_deref(), r.last_message_on_disk),
            (Some("done"), false)
        );
        assert!(
            AgentRecord::from_json_at_rest(msg("").replace("\"done\"", "7").as_bytes()).is_err()
        );
        // What a record written out carries never says where the prompt was.
        let out = serde_json::to_value(&*whole).unwrap();
        assert!(out["config"].get("systemPromptOnDisk").is_none());
    }

    #[test]
    fn record_with_path_in_id_is_rejected() {
        let json = r#"{"id": "../x", "provider": "shell", "cwd": "/", "lastStatus": "idle",
            "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"}"#;
        let err = serde_json::from_str::<AgentRecord>(json).unwrap_err();
        assert!(err.to_string().contains("invalid agent id"), "{err}");
    }
}
