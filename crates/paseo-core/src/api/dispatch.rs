//! `RuntimeHandle::call`: every request of every client (the window, the MCP server, tests, a
//! remote host) enters the runtime here. A gesture that takes several steps (create with its
//! worktree, restore with its workspaces, cancel and the agent after it, discard under the
//! agent's title) is run here as one request, never by the client.

use std::time::Duration;

use super::{Request, Response};
use crate::engine::{EngineError, ListFilter};
use crate::hosts::router::Routed;
use crate::runtime::window::WindowQuery;
use crate::runtime::{Caller, CreateAgent, RuntimeError, RuntimeHandle, WorkspaceTarget};
use crate::workspaces::changes::Page;

/// The default and the bound of a `wait` request (the `wait_for_agent` tool's, SPEC 8).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);
const MAX_WAIT_SECS: f64 = 3_600.0;

impl RuntimeHandle {
    /// Runs one request for `caller`, here or on the host that holds its agent or that it
    /// names ([`crate::hosts`]: the user's only). Bad input is an `invalid` error naming the
    /// field, with nothing changed; the rules of who may do what are the runtime's
    /// ([`crate::runtime::policy`]).
    pub async fn call(&self, caller: Caller, request: Request) -> Result<Response, RuntimeError> {
        match self.route(caller, request).await {
            Routed::Answered(answer) => answer,
            Routed::Local(request) => self.call_here(caller, *request).await,
        }
    }

    /// Runs one request on this machine.
    pub(crate) async fn call_here(
        &self,
        caller: Caller,
        request: Request,
    ) -> Result<Response, RuntimeError> {
        use Response as R;
        Ok(match request {
            Request::FleetSnapshot => R::Window(self.window_snapshot(WindowQuery::Whole).await?),
            Request::FleetFirstScreen {
                workspace_id,
                agent_ids,
            } => R::Window(
                self.window_snapshot(WindowQuery::First {
                    workspace_id,
                    agent_ids,
                })
                .await?,
            ),
            Request::FleetCards { after, limit } => R::Window(
                self.window_snapshot(WindowQuery::After {
                    after,
                    limit: limit.unwrap_or(5_000),
                })
                .await?,
            ),
            Request::SyncSnapshot { host: _ } => {
                let (seq, window) = self.sync_snapshot().await?;
                R::Synced { seq, window }
            }
            Request::GetAgent { agent_id } => R::Agent(Box::new(self.get(agent_id).await?)),
            Request::ListAgents {
                include_archived,
                parent_id,
                workspace_id,
                statuses,
                limit,
                host: _,
            } => {
                let filter = ListFilter {
                    include_archived,
                    parent: parent_id,
                    workspace: workspace_id,
                    statuses,
                };
                let (agents, total) = self.list(filter, limit.unwrap_or(100)).await?;
                R::Agents { agents, total }
            }
            Request::ArchivedAgents {
                offset,
                limit,
                host: _,
            } => {
                let limit = limit.unwrap_or(500).min(10_000);
                let (agents, total) = self.archived(offset.unwrap_or(0), limit).await?;
                R::Agents { agents, total }
            }
            Request::CreateAgent {
                provider,
                workspace,
                model,
                mode,
                title,
                prompt,
                subagent,
                notify_on_finish,
                auto_archive,
                unconfined,
                labels,
                request_id,
                budget,
                host: _,
            } => {
                if let Some(b) = &budget {
                    crate::runtime::budget::check(b, "budget")?;
                }
                let existing = matches!(workspace, WorkspaceTarget::Existing { .. });
                let mut req = CreateAgent::new(provider.trim(), workspace);
                req.caller = caller;
                req.model = model;
                req.mode = mode;
                req.title = title;
                req.initial_prompt = prompt;
                req.subagent = subagent;
                req.notify_on_finish = notify_on_finish;
                req.auto_archive = auto_archive;
                req.unconfined = unconfined;
                req.labels = labels;
                req.request = request_id;
                req.budget = budget;
                // A workspace the engine does not know (or no longer has) is the request's
                // `workspace` field at fault.
                let created = self.create(req).await.map_err(|e| match e {
                    RuntimeError::Engine(
                        EngineError::UnknownWorkspace(_) | EngineError::WorkspaceArchived(_),
                    ) if existing => e.at("workspace.workspaceId"),
                    RuntimeError::Engine(
                        EngineError::UnknownWorkspace(_) | EngineError::WorkspaceArchived(_),
                    ) => e.at("workspace"),
                    RuntimeError::Engine(EngineError::BudgetTooLarge { field, .. }) => e.at(field),
                    e => e,
                })?;
                R::Agent(Box::new(created))
            }
            Request::CreateWorktree {
                repo,
                target,
                request_id,
                host: _,
            } => R::Workspace(Box::new(
                self.create_worktree(caller, repo, target, request_id)
                    .await?,
            )),
            Request::Prompt {
                agent_id,
                prompt,
                background,
                notify_on_finish,
            } => {
                let sent = self
                    .prompt(caller, agent_id, prompt, background, notify_on_finish)
                    .await?;
                R::Prompted {
                    agent: Box::new(sent.agent),
                    background: sent.background,
                    notify: sent.notify,
                }
            }
            Request::Cancel { agent_id } => {
                self.cancel(caller, agent_id).await?;
                R::Agent(Box::new(self.get(agent_id).await?))
            }
            Request::Stop { agent_id } => {
                user_only(caller, "stop")?;
                self.stop(agent_id).await?;
                R::Done
            }
            Request::Wait {
                agent_id,
                timeout_secs,
            } => {
                let timeout = match timeout_secs {
                    None => DEFAULT_WAIT,
                    Some(s) if s.is_finite() && (0.0..=MAX_WAIT_SECS).contains(&s) => {
                        Duration::from_secs_f64(s)
                    }
                    Some(_) => {
                        return Err(RuntimeError::invalid(
                            "timeoutSecs",
                            format!("must be between 0 and {MAX_WAIT_SECS}"),
                        ))
                    }
                };
                let w = self.wait(agent_id, timeout).await?;
                R::Waited {
                    agent: Box::new(w.agent),
                    timed_out: w.timed_out,
                }
            }
            Request::Archive { agent_id } => R::AgentIds(self.archive(caller, agent_id).await?),
            Request::ArchiveFinished { parent_id } => {
                user_only(caller, "archiveFinished")?;
                R::AgentIds(self.archive_finished(parent_id).await?)
            }
            Request::ArchivePlan { agent_id } => {
                user_only(caller, "archivePlan")?;
                R::ArchivePlan(self.archive_plan(agent_id, false).await?)
            }
            Request::FinishedPlan { parent_id } => {
                user_only(caller, "finishedPlan")?;
                R::ArchivePlan(self.archive_plan(parent_id, true).await?)
            }
            Request::Restore {
                agent_id,
                as_root,
                member,
            } => {
                user_only(caller, "restore")?;
                R::AgentIds(if member {
                    self.restore_member(agent_id, as_root).await?
                } else {
                    self.restore(agent_id, as_root).await?
                })
            }
            Request::Detach { agent_id } => {
                user_only(caller, "detach")?;
                R::Agent(Box::new(self.detach(agent_id).await?))
            }
            Request::Reattach {
                agent_id,
                parent_id,
                check,
            } => {
                user_only(caller, "reattach")?;
                self.reattach(agent_id, parent_id, check).await?;
                R::Done
            }
            Request::Wake { agent_id } => {
                user_only(caller, "wake")?;
                R::Flag(self.wake(agent_id).await?)
            }
            Request::AnswerPermission {
                agent_id,
                request_id,
                allow,
            } => {
                user_only(caller, "answerPermission")?;
                self.answer_permission(agent_id, request_id, allow).await?;
                R::Done
            }
            Request::MarkSeen { agent_id } => {
                user_only(caller, "markSeen")?;
                self.mark_seen(agent_id).await?;
                R::Done
            }
            Request::Timeline {
                agent_id,
                before,
                limit,
            } => R::Timeline(
                self.timeline(agent_id, before.unwrap_or(0), limit.unwrap_or(200))
                    .await?,
            ),
            Request::SearchTimeline {
                agent_id,
                query,
                scope,
            } => {
                let scope = scope.unwrap_or_default();
                let flag = self.searches.start(&scope);
                let found = self.search_timeline(agent_id, query, flag.clone()).await;
                self.searches.finished(&scope, &flag);
                R::Found(found?)
            }
            Request::CancelSearch { scope } => {
                self.searches.cancel(&scope.unwrap_or_default());
                R::Done
            }
            Request::Changes { agent_id } => {
                R::Changes(Box::new(self.agent_changes(agent_id).await?))
            }
            Request::Diff {
                agent_id,
                path,
                offset,
                limit,
            } => R::Diff(Box::new(
                self.agent_diff(agent_id, path, Page { offset, limit })
                    .await?,
            )),
            Request::Commit { agent_id, message } => {
                user_only(caller, "commit")?;
                R::Text(self.commit_agent_changes(agent_id, message).await?)
            }
            Request::Discard { agent_id } => {
                user_only(caller, "discard")?;
                let title = self.get(agent_id).await?.record.title;
                R::Discarded(self.discard_agent_changes(agent_id, title).await?)
            }
            Request::Merge { agent_id } => {
                user_only(caller, "merge")?;
                R::Merged(self.merge_agent_changes(agent_id).await?)
            }
            Request::CreatePr {
                agent_id,
                title,
                body,
            } => {
                user_only(caller, "createPr")?;
                R::Text(self.create_pr(agent_id, title, body).await?)
            }
            Request::PrStatus { agent_id } => R::PrStatus(self.pr_status(agent_id).await?),
            Request::OpenInEditor { agent_id, path } => {
                user_only(caller, "openInEditor")?;
                R::Text(self.open_in_editor(agent_id, path).await?)
            }
            Request::AddWorkspace { path, host: _ } => {
                user_only(caller, "addWorkspace")?;
                R::Workspace(Box::new(self.add_workspace(path).await?))
            }
            Request::RenameWorkspace { workspace_id, name } => {
                user_only(caller, "renameWorkspace")?;
                R::Workspace(Box::new(self.rename_workspace(workspace_id, &name).await?))
            }
            Request::ArchiveWorkspace {
                workspace_id,
                even_if_running,
            } => {
                user_only(caller, "archiveWorkspace")?;
                R::AgentIds(
                    self.archive_workspace(workspace_id, even_if_running)
                        .await?,
                )
            }
            Request::NotificationSettings => {
                R::NotificationSettings(self.notification_settings().await?)
            }
            Request::SetNotificationSettings { settings } => {
                user_only(caller, "setNotificationSettings")?;
                self.set_notification_settings(settings).await?;
                R::NotificationSettings(settings)
            }
            Request::SetBudget { agent_id, budget } => {
                user_only(caller, "setBudget")?;
                if let Some(b) = &budget {
                    crate::runtime::budget::check(b, "budget")?;
                }
                R::Agent(Box::new(self.set_budget(agent_id, budget).await?))
            }
            Request::ListHosts => {
                user_only(caller, "listHosts")?;
                R::Hosts(self.hosts.list())
            }
            Request::AddHost { host } => {
                user_only(caller, "addHost")?;
                self.hosts.add(host).map_err(RuntimeError::Api)?;
                R::Hosts(self.hosts.list())
            }
            Request::RemoveHost { name } => {
                user_only(caller, "removeHost")?;
                self.hosts.remove(&name).map_err(RuntimeError::Api)?;
                R::Hosts(self.hosts.list())
            }
            Request::InstallHost { name } => {
                user_only(caller, "installHost")?;
                self.hosts.install(&name).await.map_err(RuntimeError::Api)?;
                R::Hosts(self.hosts.list())
            }
        })
    }
}

/// Gestures only the user makes (the window's): an agent's token reaches the tools of SPEC 8,
/// which map onto the other requests, and no further.
fn user_only(caller: Caller, kind: &str) -> Result<(), RuntimeError> {
    match caller {
        Caller::User => Ok(()),
        Caller::Agent(a) => Err(RuntimeError::Forbidden {
            field: "kind".to_string(),
            message: format!("agent {a} may not make the user's request `{kind}`"),
        }),
    }
}
