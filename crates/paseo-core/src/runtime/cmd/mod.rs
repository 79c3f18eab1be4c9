//! The actor's side of the mailbox ([`super::command`]): each command checks the caller, runs
//! the engine operation and settles its effects ([`Actor::apply`]) in one actor step.

mod agents;
mod queries;
mod workspaces;

use super::actor::Actor;
use super::command::{Command, Reply, Target};
use super::events::{FleetCounts, WorkspaceSnapshot};
use super::RuntimeError;

fn answer<T>(reply: Reply<T>, r: Result<T, RuntimeError>) {
    // The asker may have gone (a dropped request): the work is done either way.
    let _ = reply.send(r);
}

impl Actor {
    /// Runs one command (everything but `Shutdown`, which the loop handles).
    pub(super) fn dispatch(&mut self, cmd: Command) {
        match cmd {
            Command::Snapshot(r) => answer(r, Ok(self.snapshot())),
            Command::WindowSnapshot(r) => answer(r, self.window_snapshot()),
            Command::SyncSnapshot(r) => {
                let seq = self.out.seq();
                answer(r, self.window_snapshot().map(|text| (seq, text)))
            }
            Command::Subscribe(r) => answer(r, Ok(self.out.subscribe())),
            Command::Counts(r) => answer(r, Ok(FleetCounts::of(&self.engine))),
            Command::Alerts(r) => answer(r, Ok(self.alerts())),
            Command::GetAgent { id, reply } => answer(reply, self.snap(id)),
            Command::Workplace { id, reply } => answer(reply, self.workplace(id)),
            Command::CountChanges { id, reply } => {
                self.count_changes(id);
                answer(reply, Ok(()))
            }
            Command::ListAgents {
                filter,
                limit,
                reply,
            } => answer(reply, self.list(filter, limit)),
            Command::Archived {
                offset,
                limit,
                reply,
            } => answer(reply, Ok(self.archived(offset, limit))),
            Command::TimelinePage {
                id,
                before,
                limit,
                reply,
            } => answer(reply, self.timeline_page(id, before, limit)),
            Command::FlushTimeline { id, reply } => answer(reply, self.flush_timeline(id)),
            Command::PlanCreate { req, reply } => {
                answer(reply, super::policy::plan_create(&self.engine, &req))
            }
            Command::RestoreWorkspaces { id, scope, reply } => answer(
                reply,
                self.engine
                    .restore_workspaces(id, scope)
                    .map_err(Into::into),
            ),
            Command::CreateAgent {
                req,
                info,
                prepared,
                reach,
                reply,
            } => answer(reply, self.create(*req, &info, prepared, reach.as_deref())),
            Command::AddWorkspace { dir, repo, reply } => {
                let ws = self.register_directory(&dir, repo, true);
                answer(reply, Ok(WorkspaceSnapshot::of(&self.engine, &ws)))
            }
            Command::CheckLimits {
                caller,
                creates_agent,
                reply,
            } => answer(reply, self.check_limits(caller, creates_agent)),
            Command::RegisterWorktree {
                created,
                created_by,
                request,
                reply,
            } => answer(reply, self.register_worktree(&created, created_by, request)),
            Command::ArchiveWorkspace {
                id,
                even_if_running,
                reply,
            } => answer(reply, self.archive_workspace(&id, even_if_running)),
            Command::Prompt {
                caller,
                id,
                text,
                origin,
                notify,
                reach,
                reply,
            } => {
                let to = Target { id, origin, notify };
                answer(reply, self.prompt(caller, to, text, reach.as_deref()))
            }
            Command::Cancel { caller, id, reply } => answer(reply, self.cancel(caller, id)),
            Command::Archive { caller, id, reply } => answer(reply, self.archive(caller, id)),
            Command::ArchiveFinished { parent, reply } => {
                answer(reply, self.archive_finished(parent))
            }
            Command::ArchivePlan {
                id,
                finished,
                reply,
            } => {
                let plan = if finished {
                    self.engine.finished_plan(id)
                } else {
                    self.engine.archive_plan(id)
                };
                answer(reply, plan.map_err(Into::into))
            }
            Command::Detach { id, reply } => answer(reply, self.detach(id)),
            Command::RenameWorkspace { id, name, reply } => {
                answer(reply, self.rename_workspace(&id, name))
            }
            Command::Reattach {
                id,
                parent,
                reach,
                check,
                reply,
            } => answer(reply, self.reattach(id, parent, &reach, check)),
            Command::Restore {
                id,
                as_root,
                scope,
                workspaces,
                reply,
            } => answer(reply, self.restore(id, as_root, scope, &workspaces)),
            Command::UnarchiveWorkspaces { workspaces, reply } => {
                answer(reply, self.unarchive_workspaces(&workspaces))
            }
            Command::AnswerPermission {
                id,
                request_id,
                allow,
                reply,
            } => answer(reply, self.answer_permission(id, &request_id, allow)),
            Command::MarkSeen { id, reply } => answer(reply, self.mark_seen(id)),
            Command::SetBudget { id, budget, reply } => answer(reply, self.set_budget(id, budget)),
            Command::Wake { id, reply } => answer(reply, self.wake(id)),
            Command::Stop { id, reply } => answer(reply, self.stop(id)),
            Command::AgentsIn { dir, reply } => answer(reply, Ok(self.agents_in(&dir))),
            Command::HoldCheckouts { req, reply } => answer(reply, self.hold_checkouts(req)),
            Command::ReleaseCheckouts { token } => self.release_checkouts(token),
            Command::Shown { window, agent } => self.set_shown(window, agent),
            Command::DeliverPending(r) => {
                self.deliver_pending();
                answer(r, Ok(()))
            }
            Command::WriteDeferred(r) => {
                self.write_deferred(true);
                answer(r, Ok(()))
            }
            #[cfg(test)]
            Command::PushItems { id, items, reply } => {
                for it in items {
                    self.push_item(id, it);
                }
                answer(reply, Ok(()))
            }
            Command::Shutdown(r) => {
                tracing::error!("shutdown reached dispatch; the loop handles it");
                let _ = r.send(());
            }
        }
    }
}
