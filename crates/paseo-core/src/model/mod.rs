//! The shared vocabulary: records and value types in the on-disk JSON format of SPEC 1, and the
//! one status rule. Every layer (engine, store, runtime, providers, MCP, the shell) speaks these
//! nouns; this module depends on none of them.
//!
//! One file per noun: [`ids`] (ids, timestamps, unknown fields), [`agent`] (the agent record),
//! [`labels`], [`workspace`] (workspaces and projects), [`timeline`], [`turn`], [`permission`]
//! (a tool's request or a held start), [`provider`] (provider kinds), [`power`] and [`held`]
//! (SPEC 14), [`budget`] (SPEC 18), [`notice`] (finish notices), [`usage`] (tokens and cost),
//! [`lifecycle`] (SPEC 2's
//! transitions), [`status`] (buckets and who needs you), [`attention`] (status words and which
//! agents alert the user) and [`tally`] (the counts line). Everything is re-exported here, so
//! `crate::model::X` names any of them. The compact representations some of them are held in
//! (instants, unknown fields, packed labels) are gathered in [`compact`], with their reason;
//! how an object tagged by its `kind` is read, kind first, in [`tagged`].

pub mod agent;
pub mod archive_plan;
pub mod attention;
pub mod budget;
pub mod compact;
pub mod config;
pub mod held;
pub mod ids;
pub mod labels;
pub mod lifecycle;
pub mod notice;
pub mod permission;
pub mod power;
pub mod provider;
mod recent;
pub mod schedule;
pub mod status;
pub mod tagged;
pub mod tally;
pub mod timeline;
pub mod turn;
pub mod usage;
pub mod workspace;

pub use agent::{
    AgentConfig, AgentRecord, AttentionReason, NotifyArm, Persistence, Status, PARENT_LABEL,
};
pub use archive_plan::{ArchiveHead, ArchivePlan, KeptChild, Unfinished};
pub use attention::{
    alert, display_name, look, name_beyond_title, status_word, Alert, Subagents, APPROVE_START,
    BUDGET_WAIT,
};
pub use budget::{Budget, Spent, TreeBudget};
pub use held::{hold_reasons, BudgetHold, HeldTurn, Hold, HoldReason, Reach, Standing};
pub use ids::{AgentId, BatchId, Extra, ModelError, ProjectId, Timestamp, WorkspaceId};
pub use labels::Labels;
pub use lifecycle::Transition;
pub use notice::{Notice, NoticeOutcome};
pub use permission::{PermissionKind, PermissionRequest};
pub use power::{power, Power, ProviderTrust};
pub use provider::ProviderKind;
pub use status::{bucket, denied, needs_you, tree_bucket, Bucket, DENIED};
pub use tally::{FleetCounts, Tally};
pub use timeline::{ItemKind, NewItem, StyledRun, TermColor, TermStyle, TimelineItem};
pub use turn::{TurnInput, TurnOrigin, TurnOutcome, WaitingPrompt};
pub use usage::{LastRun, RecordUsage, TurnUsage, Usage};
pub use workspace::{
    clean_workspace_name, ChangeCounts, ProjectRecord, WorkspaceKind, WorkspaceRecord,
    MAX_WORKSPACE_NAME,
};
