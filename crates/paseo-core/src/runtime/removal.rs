//! Removing an archived worktree (SPEC 15): only once every process working in it has stopped,
//! with what was left in it snapshotted on its branch first.

use std::path::Path;

use tokio::sync::{mpsc, oneshot, watch};

use super::durable::CLOSE_WAIT;
use super::internal::Internal;
use crate::model::{AgentId, WorkspaceId, WorkspaceRecord};
use crate::store::Layout;
use crate::workspaces;

/// A worktree an autoArchive archived, removed once the sessions its archive closed (run as
/// effects after the one that archived it) are all closing.
pub(super) struct Pending {
    pub(super) workspace: WorkspaceId,
    /// The archiving agent and every agent archived with the worktree.
    pub(super) wait_for: Vec<AgentId>,
    pub(super) cause: String,
    pub(super) show_on: Vec<AgentId>,
}

/// Removes the worktree of `rec` once the processes of `closes` are gone, snapshotting what is
/// left in it first (SPEC 15). `cause` names what was archived (for the snapshot commit's
/// message); `show_on` are the agents whose timelines show a failure. A worktree that cannot be
/// snapshotted or removed is kept and reported as [`Internal::WorktreeKept`]: its workspace
/// comes back unarchived (so it stays visible and archiving it again retries), and the failure
/// shows on those timelines and as a notice.
pub(super) fn remove_later(
    rec: WorkspaceRecord,
    closes: Vec<watch::Receiver<bool>>,
    layout: Layout,
    tx: mpsc::UnboundedSender<Internal>,
    cause: &str,
    show_on: Vec<AgentId>,
) {
    let message = workspaces::worktree::snapshot_message(Path::new(&rec.cwd), cause);
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
        for mut rx in closes {
            let _ = tokio::time::timeout_at(deadline, rx.wait_for(|d| *d)).await;
        }
        // No restore re-adds a worktree while its folder moves (`readd` takes the same
        // lock), and one that came first keeps it: the workspace is no longer archived.
        let changing = workspaces::worktree::CHANGING.lock().await;
        let (ask, still) = oneshot::channel();
        let asked = tx.send(Internal::StillArchived {
            workspace: rec.workspace_id.clone(),
            reply: ask,
        });
        if asked.is_err() || !still.await.unwrap_or(false) {
            tracing::info!(workspace = %rec.workspace_id, path = %rec.cwd, "worktree kept: restored before its removal");
            return;
        }
        let repo = rec.repo.clone().unwrap_or_default();
        let cwd = rec.cwd.clone();
        let branch = rec.branch.clone();
        let r = tokio::task::spawn_blocking(move || {
            workspaces::worktree::snapshot_and_remove(
                &layout,
                &repo,
                &cwd,
                branch.as_deref(),
                &message,
            )
        })
        .await;
        drop(changing);
        let failure = match r {
            Ok(Ok(removed)) => {
                tracing::info!(
                    workspace = %rec.workspace_id,
                    path = %rec.cwd,
                    snapshot = ?removed.snapshot,
                    trash = ?removed.trash,
                    "worktree removed"
                );
                return;
            }
            Ok(Err(e)) => e.to_string(),
            Err(e) => format!("the removal stopped: {e}"),
        };
        let _ = tx.send(Internal::WorktreeKept {
            workspace: rec.workspace_id.clone(),
            show_on,
            message: format!(
                "The worktree {} was kept with everything in it: {failure}. Its workspace \
                 stays open; archive it again to retry.",
                rec.cwd
            ),
        });
    });
}
