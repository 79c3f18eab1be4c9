//! The actor's own messages: what its spawned tasks (session starts, timers, removals, counts,
//! the writer's failures and acks) report back, one at a time, into its loop.

use crate::model::{AgentId, WorkspaceId};
use crate::providers::{ProviderError, Session};
use crate::store;

pub(super) enum Internal {
    Started {
        agent: AgentId,
        generation: u64,
        result: Result<Box<dyn Session>, ProviderError>,
    },
    CancelTimeout {
        agent: AgentId,
        turn: u64,
    },
    /// A session start's bound passed: if it is still not ready, it failed.
    StartTimeout {
        agent: AgentId,
        generation: u64,
    },
    /// A worktree could not be snapshotted or removed: it stays, and so does its workspace.
    WorktreeKept {
        workspace: WorkspaceId,
        show_on: Vec<AgentId>,
        message: String,
    },
    /// Whether a workspace is still archived: a worktree's removal asks just before it moves the
    /// folder, so a restore that came first keeps it.
    StillArchived {
        workspace: WorkspaceId,
        reply: tokio::sync::oneshot::Sender<bool>,
    },
    /// A file started failing to be written (SPEC 15).
    StoreFailed(store::StoreFailure),
    /// What an agent changed on disk, counted off the actor.
    Counted {
        agent: AgentId,
        counts: Option<crate::model::ChangeCounts>,
    },
    /// An archived agent's record is durable: announce the archive.
    ArchiveDurable {
        agent: AgentId,
    },
}
