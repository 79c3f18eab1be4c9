//! The clonable handle to the runtime. Clients (the window, the MCP server, a remote host) reach
//! it through its one entry, `RuntimeHandle::call` (`crate::api`), which runs each request with
//! the methods here; the shell's tray and notifier and the tests also use them directly. Each
//! method checks what needs no state, prepares slow disk and git work off the actor, then sends
//! one typed command and waits for its reply (and, for changes that must be durable first, for
//! the writes and dead processes it reports).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, oneshot};

use super::command::{Alerts, Command, Reply};
use super::events::{AgentSnapshot, Event, FleetCounts, FleetSnapshot, WorkspaceSnapshot};
use super::policy::{self, Caller};
use super::timeline::Page;
use super::{blocking, RuntimeError, MAX_PROMPT_BYTES};
use crate::engine::{ListFilter, RestoreScope};
use crate::model::{AgentId, ArchivePlan, Status, TimelineItem, WorkspaceId, WorkspaceKind};
use crate::providers::{ProviderInfo, ProviderRegistry};
use crate::store::timeline::search::{self, TimelineSearch};
use crate::store::{Layout, Writer};
use crate::workspaces::{self, WorkspaceError};

/// What [`RuntimeHandle::prompt`] did.
#[derive(Clone, Debug)]
pub struct Prompted {
    /// The agent right after (running, or initializing while its session resumes).
    pub agent: AgentSnapshot,
    pub background: bool,
    /// Who hears when the turn ends.
    pub notify: Option<AgentId>,
}

/// The clonable handle to the runtime.
#[derive(Clone)]
pub struct RuntimeHandle {
    pub(super) tx: mpsc::UnboundedSender<Command>,
    pub(super) events: broadcast::Sender<Event>,
    pub(super) writer: Arc<Writer>,
    pub(super) providers: ProviderRegistry,
    pub(super) layout: Layout,
    /// Directories no agent reaches through its cwd tree (SPEC 16: the data root and
    /// `sandbox.hide`), for the reach check (SPEC 14).
    pub(super) hidden: Arc<[std::path::PathBuf]>,
    pub(super) changes_gate: super::gate::Gate,
    /// The running timeline search of each window (`searchTimeline` requests).
    pub(crate) searches: Arc<super::searches::Searches>,
}

pub(super) fn check_prompt(field: &str, p: &str) -> Result<(), RuntimeError> {
    if p.trim().is_empty() {
        return Err(RuntimeError::invalid(field, "the prompt is empty"));
    }
    if p.len() > MAX_PROMPT_BYTES {
        return Err(RuntimeError::invalid(
            field,
            format!(
                "the prompt is {} bytes; the limit is {MAX_PROMPT_BYTES}",
                p.len()
            ),
        ));
    }
    Ok(())
}

impl RuntimeHandle {
    pub(super) fn new(
        tx: mpsc::UnboundedSender<Command>,
        events: broadcast::Sender<Event>,
        writer: Arc<Writer>,
        providers: ProviderRegistry,
        layout: Layout,
        hidden: Vec<std::path::PathBuf>,
        changes_gate: super::gate::Gate,
    ) -> Self {
        RuntimeHandle {
            tx,
            events,
            writer,
            providers,
            layout,
            hidden: hidden.into(),
            changes_gate,
            searches: Arc::default(),
        }
    }

    /// Sends one command and waits for its reply.
    pub(super) async fn ask<T>(
        &self,
        cmd: impl FnOnce(Reply<T>) -> Command,
    ) -> Result<T, RuntimeError> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(cmd(tx)).map_err(|_| RuntimeError::Stopped)?;
        rx.await.map_err(|_| RuntimeError::Stopped)?
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// A receiver of events and the number of the last event before it: the `n`th event it
    /// receives is number `seq + n` (a lag of `k` skips `k` numbers). With
    /// [`Self::sync_snapshot`] a client resynchronises with nothing missed or doubled (SPEC 17).
    pub(crate) async fn subscribe_numbered(
        &self,
    ) -> Result<(broadcast::Receiver<Event>, u64), RuntimeError> {
        self.ask(Command::Subscribe).await
    }

    /// The window's snapshot and the number of the last event it reflects.
    pub(crate) async fn sync_snapshot(&self) -> Result<(u64, String), RuntimeError> {
        self.ask(Command::SyncSnapshot).await
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    pub(crate) fn providers(&self) -> Vec<ProviderInfo> {
        self.providers.infos()
    }

    pub(crate) async fn snapshot(&self) -> Result<FleetSnapshot, RuntimeError> {
        self.ask(Command::Snapshot).await
    }

    pub(crate) async fn counts(&self) -> Result<FleetCounts, RuntimeError> {
        self.ask(Command::Counts).await
    }

    /// The counts and the agents that may need the user (what the tray shows).
    pub(crate) async fn alerts(&self) -> Result<Alerts, RuntimeError> {
        self.ask(Command::Alerts).await
    }

    pub(crate) async fn get(&self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        self.ask(|reply| Command::GetAgent { id, reply }).await
    }

    /// Agents matching `filter`, oldest first, at most `limit`, with the total count. A parent
    /// or workspace the filter names must exist.
    pub(crate) async fn list(
        &self,
        filter: ListFilter,
        limit: usize,
    ) -> Result<(Vec<AgentSnapshot>, usize), RuntimeError> {
        self.ask(|reply| Command::ListAgents {
            filter,
            limit,
            reply,
        })
        .await
    }

    /// Archived agents, most recently archived first: `limit` of them from `offset` on, and how
    /// many there are in all (the window pages through thousands).
    pub(crate) async fn archived(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<AgentSnapshot>, usize), RuntimeError> {
        self.ask(|reply| Command::Archived {
            offset,
            limit,
            reply,
        })
        .await
    }

    /// Registers a workspace for a directory the user picked (an unarchived workspace for the
    /// same directory is reused).
    pub(crate) async fn add_workspace(
        &self,
        path: String,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        let (dir, repo) = blocking(move || {
            let dir = workspaces::existing_dir("path", &path)?;
            let repo = workspaces::repo_info(&dir);
            Ok::<_, WorkspaceError>((dir, repo))
        })
        .await??;
        self.ask(|reply| Command::AddWorkspace { dir, repo, reply })
            .await
    }

    /// Archives a workspace: refused (`busy`) while live agents work in it unless
    /// `even_if_running`, which archives (and stops) them too. A worktree is then removed with
    /// git once their processes are gone, never losing work (SPEC 15): what is left in it is
    /// committed on its branch first, and if that fails the worktree is kept, the workspace
    /// comes back and a notice says why.
    pub(crate) async fn archive_workspace(
        &self,
        id: WorkspaceId,
        even_if_running: bool,
    ) -> Result<Vec<AgentId>, RuntimeError> {
        let (archived, wait) = self
            .ask(|reply| Command::ArchiveWorkspace {
                id,
                even_if_running,
                reply,
            })
            .await?;
        wait.wait(&self.writer).await?;
        Ok(archived)
    }

    /// Names the workspace (an empty name clears it): trimmed, one line, at most
    /// [`crate::model::MAX_WORKSPACE_NAME`] characters, else `invalid` naming `name`.
    pub(crate) async fn rename_workspace(
        &self,
        id: WorkspaceId,
        name: &str,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        let name = crate::model::clean_workspace_name(name)
            .map_err(|m| RuntimeError::invalid("name", m))?;
        self.ask(|reply| Command::RenameWorkspace { id, name, reply })
            .await
    }

    /// Sends `caller`'s prompt, if it may prompt `id`; background and notification default by
    /// [`policy::prompt_route`].
    pub(crate) async fn prompt(
        &self,
        caller: Caller,
        id: AgentId,
        text: String,
        background: Option<bool>,
        notify_on_finish: Option<bool>,
    ) -> Result<Prompted, RuntimeError> {
        let route = policy::prompt_route(caller, background, notify_on_finish)?;
        check_prompt("prompt", &text)?;
        // Where the prompted agent works against the caller (SPEC 14), read once and checked
        // on disk here, off the actor; the actor holds the turn if it reaches further.
        // A caller that is gone gets no check: the actor refuses it (`authorize`).
        let reach = match caller.agent().filter(|c| *c != id) {
            Some(c) => match self.ask(|reply| Command::Workplace { id: c, reply }).await {
                Ok((caller_cwd, _)) => {
                    let (cwd, _) = self.ask(|reply| Command::Workplace { id, reply }).await?;
                    Some(Box::new(self.reach_of(caller_cwd, cwd).await?))
                }
                Err(_) => None,
            },
            None => None,
        };
        let agent = self
            .ask(|reply| Command::Prompt {
                caller,
                id,
                text,
                origin: route.origin,
                notify: route.notify,
                reach,
                reply,
            })
            .await?;
        Ok(Prompted {
            agent,
            background: route.background,
            notify: route.notify,
        })
    }

    /// Interrupts the current turn, if `caller` may cancel `id`, and waits (bounded) until it
    /// has ended; returns the status.
    pub(crate) async fn cancel(&self, caller: Caller, id: AgentId) -> Result<Status, RuntimeError> {
        let mut rx = self.events.subscribe();
        let running = self
            .ask(|reply| Command::Cancel { caller, id, reply })
            .await?;
        if !running {
            return Ok(self.get(id).await?.status);
        }
        let limit = Duration::from_secs(30);
        let w = self
            .wait_on(id, limit, &mut rx, |s| s.status != Status::Running)
            .await?;
        Ok(w.agent.status)
    }

    /// Archives the agent and its cascade, if `caller` may archive `id`; resolves once every
    /// archived record is durable and their process trees are gone.
    pub(crate) async fn archive(
        &self,
        caller: Caller,
        id: AgentId,
    ) -> Result<Vec<AgentId>, RuntimeError> {
        let (ids, wait) = self
            .ask(|reply| Command::Archive { caller, id, reply })
            .await?;
        wait.wait(&self.writer).await?;
        Ok(ids)
    }

    /// "Archive finished": every child of `parent` that is not running, as one batch.
    pub(crate) async fn archive_finished(
        &self,
        parent: AgentId,
    ) -> Result<Vec<AgentId>, RuntimeError> {
        let (ids, wait) = self
            .ask(|reply| Command::ArchiveFinished { parent, reply })
            .await?;
        wait.wait(&self.writer).await?;
        Ok(ids)
    }

    /// What archiving `id` would touch; with `finished`, what "Archive finished" on `id` would
    /// archive and leave (SPEC 5): the confirm dialog's facts, asked just before it shows.
    pub(crate) async fn archive_plan(
        &self,
        id: AgentId,
        finished: bool,
    ) -> Result<ArchivePlan, RuntimeError> {
        self.ask(|reply| Command::ArchivePlan {
            id,
            finished,
            reply,
        })
        .await
    }

    pub(crate) async fn detach(&self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        self.ask(|reply| Command::Detach { id, reply }).await
    }

    /// The undo of [`Self::detach`]: `id` goes back under `parent` (the agent that created
    /// it) when that narrows power (SPEC 14), else a `conflict` saying why. With `check`,
    /// nothing changes: the answer says whether it may.
    pub(crate) async fn reattach(
        &self,
        id: AgentId,
        parent: AgentId,
        check: bool,
    ) -> Result<(), RuntimeError> {
        let child_cwd = self.get(id).await?.record.cwd.to_string();
        let parent_cwd = self.get(parent).await?.record.cwd.to_string();
        let reach = Box::new(self.reach_of(parent_cwd, child_cwd).await?);
        self.ask(|reply| Command::Reattach {
            id,
            parent,
            reach,
            check,
            reply,
        })
        .await
    }

    /// Restores the batch `id` was archived in (closed, links intact). Archived workspaces the
    /// batch lives in come back first: a removed worktree is re-added from its kept branch,
    /// whose last commit is the snapshot of what was left in it (SPEC 15).
    pub(crate) async fn restore(
        &self,
        id: AgentId,
        as_root: bool,
    ) -> Result<Vec<AgentId>, RuntimeError> {
        self.restore_scoped(id, as_root, RestoreScope::Batch).await
    }

    /// Restores `id` and the members of its archive batch below it, closed, links intact; the
    /// rest of the batch stays archived, restorable (SPEC 5). Otherwise as [`Self::restore`].
    pub(crate) async fn restore_member(
        &self,
        id: AgentId,
        as_root: bool,
    ) -> Result<Vec<AgentId>, RuntimeError> {
        self.restore_scoped(id, as_root, RestoreScope::Member).await
    }

    async fn restore_scoped(
        &self,
        id: AgentId,
        as_root: bool,
        scope: RestoreScope,
    ) -> Result<Vec<AgentId>, RuntimeError> {
        let archived_ws = self
            .ask(|reply| Command::RestoreWorkspaces { id, scope, reply })
            .await?;
        let mut back = Vec::new();
        for rec in archived_ws {
            let layout = self.layout.clone();
            let wid = rec.workspace_id.clone();
            let readded = blocking(move || match rec.kind {
                WorkspaceKind::Worktree => crate::workspaces::worktree::readd(
                    &layout,
                    rec.repo.as_deref().unwrap_or_default(),
                    &rec.cwd,
                    rec.branch.as_deref().unwrap_or_default(),
                ),
                _ => workspaces::existing_dir("workspace.cwd", &rec.cwd).map(|_| ()),
            })
            .await?;
            if let Err(e) = readded {
                // Those already back on disk come back in the fleet too, as they would have
                // one by one.
                if !back.is_empty() {
                    self.ask(|reply| Command::UnarchiveWorkspaces {
                        workspaces: back,
                        reply,
                    })
                    .await?;
                }
                return Err(e.into());
            }
            back.push(wid);
        }
        let (ids, wait) = self
            .ask(|reply| Command::Restore {
                id,
                as_root,
                scope,
                workspaces: back,
                reply,
            })
            .await?;
        wait.wait(&self.writer).await?;
        Ok(ids)
    }

    pub(crate) async fn answer_permission(
        &self,
        id: AgentId,
        request_id: String,
        allow: bool,
    ) -> Result<(), RuntimeError> {
        self.ask(|reply| Command::AnswerPermission {
            id,
            request_id,
            allow,
            reply,
        })
        .await
    }

    /// A window (by its label) now shows `agent`'s pane, or no agent (`None`, also when it
    /// closes): the agent a user is looking at is never closed to make room for a waiting start
    /// (SPEC 14 `maxLiveAgents`). Applied in order with the commands sent after it.
    pub(crate) fn set_shown(
        &self,
        window: &str,
        agent: Option<AgentId>,
    ) -> Result<(), RuntimeError> {
        self.tx
            .send(Command::Shown {
                window: window.to_string(),
                agent,
            })
            .map_err(|_| RuntimeError::Stopped)
    }

    /// The user opened the agent: clears its attention.
    pub(crate) async fn mark_seen(&self, id: AgentId) -> Result<(), RuntimeError> {
        self.ask(|reply| Command::MarkSeen { id, reply }).await
    }

    /// The user opened a closed agent: its session resumes now (`closed → initializing`), so a
    /// prompt typed right away waits for it instead of starting it. Whether a session started.
    pub(crate) async fn wake(&self, id: AgentId) -> Result<bool, RuntimeError> {
        self.ask(|reply| Command::Wake { id, reply }).await
    }

    /// Stops the agent's process (it stays resumable).
    pub(crate) async fn stop(&self, id: AgentId) -> Result<(), RuntimeError> {
        let wait = self.ask(|reply| Command::Stop { id, reply }).await?;
        wait.wait(&self.writer).await?;
        Ok(())
    }

    /// Timeline items with `seq < before` (0 = the newest), at most `limit`, oldest first.
    pub(crate) async fn timeline(
        &self,
        id: AgentId,
        before: u64,
        limit: usize,
    ) -> Result<Vec<TimelineItem>, RuntimeError> {
        let limit = limit.clamp(1, 5_000);
        let page = self
            .ask(|reply| Command::TimelinePage {
                id,
                before,
                limit,
                reply,
            })
            .await?;
        match page {
            Page::Ready(items) => Ok(items),
            Page::Disk(rx) => rx
                .await
                .map_err(|_| RuntimeError::Stopped)?
                .map_err(Into::into),
        }
    }

    /// Finds `query` (case-insensitive) in the agent's whole timeline, what is paged out to its
    /// file included (the find bar). Stops with a `canceled` error once `cancel` is set.
    pub(crate) async fn search_timeline(
        &self,
        id: AgentId,
        query: String,
        cancel: Arc<std::sync::atomic::AtomicBool>,
    ) -> Result<TimelineSearch, RuntimeError> {
        if query.trim().is_empty() {
            return Err(RuntimeError::invalid("query", "the search text is empty"));
        }
        if query.chars().count() > search::MAX_QUERY_CHARS {
            return Err(RuntimeError::invalid(
                "query",
                format!(
                    "the search text is longer than {} characters",
                    search::MAX_QUERY_CHARS
                ),
            ));
        }
        let written = self
            .ask(|reply| Command::FlushTimeline { id, reply })
            .await?;
        written.await.map_err(|_| RuntimeError::Stopped)?;
        let path = self.layout.timeline_path(id);
        tokio::task::spawn_blocking(move || search::search_file(id, &path, &query, &cancel))
            .await
            .map_err(|_| RuntimeError::Stopped)?
            .map_err(Into::into)
    }

    /// Lets queued finish notices run (call once the MCP server is up).
    pub(crate) async fn deliver_pending(&self) -> Result<(), RuntimeError> {
        self.ask(Command::DeliverPending).await
    }

    /// Closes every session (statuses persisted), flushes everything, stops the actor.
    pub(crate) async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Command::Shutdown(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// A turn on behalf of `origin` whose end `notify` hears, with no caller's rules: the
    /// runtime's own tests arm a notice this way without building the agents that would.
    #[cfg(test)]
    pub(crate) async fn prompt_on_behalf(
        &self,
        id: AgentId,
        text: String,
        origin: crate::model::TurnOrigin,
        notify: Option<AgentId>,
    ) -> Result<AgentSnapshot, RuntimeError> {
        self.ask(|reply| Command::Prompt {
            caller: Caller::User,
            id,
            text,
            origin,
            notify,
            reach: None,
            reply,
        })
        .await
    }

    #[cfg(test)]
    pub(crate) async fn push_items(
        &self,
        id: AgentId,
        items: Vec<crate::model::NewItem>,
    ) -> Result<(), RuntimeError> {
        self.ask(|reply| Command::PushItems { id, items, reply })
            .await
    }

    /// Waits until everything submitted so far is durable, the held-back load repairs included.
    pub(crate) async fn flush(&self) {
        let _ = self.ask(Command::WriteDeferred).await;
        self.writer.flush().await;
    }
}
