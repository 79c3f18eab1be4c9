//! Records and value types, in the on-disk JSON format of SPEC 1.
//!
//! Every record keeps the fields it does not know in `extra` (flattened), so a record written by a
//! newer version or by upstream survives a rewrite by us. Ids are validated newtypes: an `AgentId`
//! is always a UUID, so no id read from the network or a file can name a path outside the data root.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use uuid::Uuid;

/// The label that links a subagent to its parent.
pub const PARENT_LABEL: &str = "paseo.parent-agent-id";

pub type Extra = Map<String, Value>;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("invalid agent id {0:?}: expected a UUID")]
    InvalidAgentId(String),
    #[error("invalid {kind} id {value:?}: expected 1 to 128 letters, digits, '-', '_' or '.'")]
    InvalidOpaqueId { kind: &'static str, value: String },
    #[error("invalid timestamp {0:?}: expected ISO 8601 / RFC 3339")]
    InvalidTimestamp(String),
}

/// An agent id: always a UUID (v4 when we create it; any UUID is accepted on load).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(Uuid);

impl AgentId {
    pub fn new() -> Self {
        AgentId(Uuid::new_v4())
    }
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }
}

impl Default for AgentId {
    fn default() -> Self {
        Self::new()
    }
}

impl FromStr for AgentId {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Only the canonical hyphenated form: `Uuid::parse_str` also takes braces and URNs,
        // which would give one agent several spellings (and several file names).
        if s.len() != 36 {
            return Err(ModelError::InvalidAgentId(s.to_string()));
        }
        Uuid::parse_str(s)
            .map(AgentId)
            .map_err(|_| ModelError::InvalidAgentId(s.to_string()))
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({})", self.0.hyphenated())
    }
}

impl Serialize for AgentId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for AgentId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

fn valid_opaque(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && s != "."
        && s != ".."
}

macro_rules! opaque_id {
    ($name:ident, $kind:literal) => {
        /// An opaque id (we mint UUIDs; other tools' ids of a safe shape are accepted). Shared,
        /// so the engine's indexes clone it without allocating.
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::sync::Arc<str>);

        impl $name {
            pub fn new() -> Self {
                $name(Uuid::new_v4().hyphenated().to_string().into())
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl FromStr for $name {
            type Err = ModelError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                if valid_opaque(s) {
                    Ok($name(s.into()))
                } else {
                    Err(ModelError::InvalidOpaqueId {
                        kind: $kind,
                        value: s.chars().take(200).collect(),
                    })
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

opaque_id!(WorkspaceId, "workspace");
opaque_id!(ProjectId, "project");
opaque_id!(BatchId, "archive batch");

/// A UTC instant, serialized as ISO 8601 with millisecond precision and a `Z`
/// (`2026-12-02T18:18:31.123Z`). Kept at millisecond precision in memory too, so a record
/// read back from disk equals the one in memory.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    pub fn now() -> Self {
        Self::from_millis(Utc::now().timestamp_millis())
    }
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(DateTime::from_timestamp_millis(ms).unwrap_or_default())
    }
    pub fn millis(&self) -> i64 {
        self.0.timestamp_millis()
    }
    pub fn as_datetime(&self) -> DateTime<Utc> {
        self.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl FromStr for Timestamp {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DateTime::parse_from_rfc3339(s)
            .map(|d| Self::from_millis(d.with_timezone(&Utc).timestamp_millis()))
            .map_err(|_| ModelError::InvalidTimestamp(s.chars().take(100).collect()))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
}

/// Provider settings of one agent. Provider-specific extras live in `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
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

/// One agent, as stored in `$PASEO_HOME/agents/{cwd-with-dashes}/{id}.json`.
// Deserialize is written by hand below: the derived one with `flatten` buffers every field of
// every record before reading it, which made loading 10,000 records four times slower.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRecord {
    pub id: AgentId,
    pub provider: String,
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<WorkspaceId>,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub last_status: Status,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_message_at: Option<Timestamp>,
    #[serde(default)]
    pub config: AgentConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistence: Option<Persistence>,
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
    pub notify_arm: Option<NotifyArm>,
    /// Last assistant text (or output tail) of the latest turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message: Option<String>,
    /// Number of turns started so far.
    #[serde(default)]
    pub turn_count: u64,
    /// Whether autoArchive already fired (it fires once, on the first terminal turn event).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_archive_done: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

impl<'de> Deserialize<'de> for AgentRecord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(AgentRecordVisitor)
    }
}

struct AgentRecordVisitor;

impl<'de> serde::de::Visitor<'de> for AgentRecordVisitor {
    type Value = AgentRecord;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an agent record (a JSON object)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<AgentRecord, A::Error> {
        use serde::de::Error;
        let mut id = None;
        let mut provider = None;
        let mut cwd = None;
        let mut last_status = None;
        let mut created_at = None;
        let mut updated_at = None;
        let mut r = AgentRecordOptional::default();
        let mut extra = Extra::new();
        // Keys are usually borrowed from the input; an escaped key arrives owned.
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
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
                "config" => r.config = map.next_value::<Option<_>>()?.unwrap_or_default(),
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
                "lastMessage" => r.last_message = map.next_value()?,
                "turnCount" => r.turn_count = map.next_value::<Option<u64>>()?.unwrap_or_default(),
                "autoArchiveDone" => {
                    r.auto_archive_done = map.next_value::<Option<bool>>()?.unwrap_or_default()
                }
                _ => {
                    let v: Value = map.next_value()?;
                    extra.insert(key.into_owned(), v);
                }
            }
        }
        Ok(AgentRecord {
            id: id.ok_or_else(|| A::Error::missing_field("id"))?,
            provider: provider.ok_or_else(|| A::Error::missing_field("provider"))?,
            cwd: cwd.ok_or_else(|| A::Error::missing_field("cwd"))?,
            workspace_id: r.workspace_id,
            title: r.title,
            labels: r.labels,
            last_status: last_status.ok_or_else(|| A::Error::missing_field("lastStatus"))?,
            created_at: created_at.ok_or_else(|| A::Error::missing_field("createdAt"))?,
            updated_at: updated_at.ok_or_else(|| A::Error::missing_field("updatedAt"))?,
            last_activity_at: r.last_activity_at,
            last_user_message_at: r.last_user_message_at,
            config: r.config,
            persistence: r.persistence,
            requires_attention: r.requires_attention,
            attention_reason: r.attention_reason,
            attention_timestamp: r.attention_timestamp,
            last_error: r.last_error,
            archived_at: r.archived_at,
            auto_archive: r.auto_archive,
            notify_on_finish: r.notify_on_finish,
            created_by: r.created_by,
            archive_batch_id: r.archive_batch_id,
            created_workspace_id: r.created_workspace_id,
            notify_arm: r.notify_arm,
            last_message: r.last_message,
            turn_count: r.turn_count,
            auto_archive_done: r.auto_archive_done,
            extra,
        })
    }
}

/// The optional fields of a record while it is being read.
#[derive(Default)]
struct AgentRecordOptional {
    workspace_id: Option<WorkspaceId>,
    title: String,
    labels: BTreeMap<String, String>,
    last_activity_at: Option<Timestamp>,
    last_user_message_at: Option<Timestamp>,
    config: AgentConfig,
    persistence: Option<Persistence>,
    requires_attention: bool,
    attention_reason: Option<AttentionReason>,
    attention_timestamp: Option<Timestamp>,
    last_error: Option<String>,
    archived_at: Option<Timestamp>,
    auto_archive: bool,
    notify_on_finish: bool,
    created_by: Option<AgentId>,
    archive_batch_id: Option<BatchId>,
    created_workspace_id: Option<WorkspaceId>,
    notify_arm: Option<NotifyArm>,
    last_message: Option<String>,
    turn_count: u64,
    auto_archive_done: bool,
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

impl AgentRecord {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceKind {
    Directory,
    LocalCheckout,
    Worktree,
}

/// One workspace, in `$PASEO_HOME/projects/workspaces.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceRecord {
    pub workspace_id: WorkspaceId,
    pub project_id: ProjectId,
    pub cwd: String,
    pub kind: WorkspaceKind,
    #[serde(default)]
    pub display_name: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<Timestamp>,
    /// Worktrees: the repository root the worktree was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Worktrees and checkouts: the branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Worktrees: the agent whose request created it, if an agent did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_agent_id: Option<AgentId>,
    /// Worktrees: the request that created it (the tool call or UI gesture).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_request: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl WorkspaceRecord {
    pub fn is_archived(&self) -> bool {
        self.archived_at.is_some()
    }
}

/// A project: the git repository (or plain directory) that workspaces belong to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRecord {
    pub project_id: ProjectId,
    #[serde(default)]
    pub display_name: String,
    /// The key that groups workspaces: the remote URL when there is one, else the repository
    /// root, else the directory.
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_url: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The activity bucket of a workspace (SPEC 6), most urgent first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    NeedsInput,
    Failed,
    Running,
    Attention,
    Done,
}

impl Bucket {
    pub const ALL: [Bucket; 5] = [
        Bucket::NeedsInput,
        Bucket::Failed,
        Bucket::Running,
        Bucket::Attention,
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
            Bucket::Done => "done",
        }
    }
}

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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_id_accepts_only_canonical_uuids() {
        assert!("2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d"
            .parse::<AgentId>()
            .is_ok());
        for bad in [
            "",
            "..",
            "../../etc/passwd",
            "2f1c0d5e8f9a4a7b9c2d1e2f3a4b5c6d",
            "{2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d}",
            "2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6/",
        ] {
            assert!(bad.parse::<AgentId>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn opaque_ids_reject_path_like_values() {
        assert!("ws-1.main_2".parse::<WorkspaceId>().is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b", "a b", &"x".repeat(129)] {
            assert!(bad.parse::<WorkspaceId>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn timestamps_round_trip_at_millisecond_precision() {
        let t: Timestamp = "2026-12-02T18:18:31.123456+02:00".parse().unwrap();
        assert_eq!(t.to_string(), "2026-12-02T16:18:31.123Z");
        let back: Timestamp = t.to_string().parse().unwrap();
        assert_eq!(t, back);
        assert!("yesterday".parse::<Timestamp>().is_err());
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
        assert_eq!(out["lastStatus"], "idle");
        assert_eq!(out["createdAt"], "2026-01-01T00:00:00.000Z");
        let again: AgentRecord = serde_json::from_value(out).unwrap();
        assert_eq!(again, rec);
    }

    #[test]
    fn record_with_path_in_id_is_rejected() {
        let json = r#"{"id": "../x", "provider": "shell", "cwd": "/", "lastStatus": "idle",
            "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"}"#;
        let err = serde_json::from_str::<AgentRecord>(json).unwrap_err();
        assert!(err.to_string().contains("invalid agent id"), "{err}");
    }
}
