//! Creating agents and worktrees: the checks that need no state, the SPEC 14 limits before any
//! slow or lasting work, git and directories off the actor, then one command that decides and
//! applies the rest.

use std::path::Path;

use super::command::{Command, MadeWorktree, Prepared};
use super::events::{AgentSnapshot, WorkspaceSnapshot};
use super::handle::check_prompt;
use super::policy::{self, Caller};
use super::{
    blocking, CreateAgent, ExistingWorkspace, RuntimeError, RuntimeHandle, WorkspaceTarget,
    MAX_TITLE_CHARS,
};
use crate::model::{AgentId, Reach, PARENT_LABEL};
use crate::workspaces::worktree::WorktreeTarget;
use crate::workspaces::{self, WorkspaceError};

fn check_create(req: &CreateAgent) -> Result<(), RuntimeError> {
    if let Some(p) = &req.initial_prompt {
        check_prompt("initialPrompt", p)?;
    }
    if let Some(t) = &req.title {
        if t.chars().count() > MAX_TITLE_CHARS {
            return Err(RuntimeError::invalid(
                "title",
                format!("longer than {MAX_TITLE_CHARS} characters"),
            ));
        }
    }
    for (k, v) in &req.labels {
        if k.is_empty() || k.len() > 200 || v.len() > 2_000 {
            return Err(RuntimeError::invalid(
                &format!("labels.{k}"),
                "label keys must be 1–200 bytes and values at most 2,000",
            ));
        }
        if k == PARENT_LABEL {
            return Err(RuntimeError::invalid(
                &format!("labels.{k}"),
                "the parent label is set by relationship, not by labels",
            ));
        }
    }
    Ok(())
}

impl RuntimeHandle {
    /// Where `cwd` stands against `caller_cwd` on disk (blocking: canonical paths and git).
    pub(super) async fn reach_of(
        &self,
        caller_cwd: String,
        cwd: String,
    ) -> Result<policy::ReachCheck, RuntimeError> {
        let hidden = self.hidden.clone();
        blocking(move || {
            let reach = workspaces::reach::relate(Path::new(&caller_cwd), Path::new(&cwd), &hidden);
            policy::ReachCheck {
                caller_cwd,
                cwd,
                reach,
            }
        })
        .await
    }

    /// Creates an agent. What needs no state is checked first; git and file-system work runs
    /// here, off the actor (after one read when it depends on the caller's defaults); then one
    /// command decides and applies the rest. Its session starts in the background (the first
    /// prompt runs when ready).
    pub(crate) async fn create(&self, req: CreateAgent) -> Result<AgentSnapshot, RuntimeError> {
        policy::precheck_create(&req)?;
        let info = self.providers.resolve(&req.provider)?.info();
        check_create(&req)?;
        // SPEC 14 limits before anything is made: a refused create leaves no worktree, branch
        // or workspace behind (the actor checks them again in the step that creates).
        if let Some(caller) = req.caller.agent() {
            self.ask(|reply| Command::CheckLimits {
                caller,
                creates_agent: true,
                reply,
            })
            .await?;
        }
        let plan = if policy::needs_plan(&req) {
            let r = Box::new(req.clone());
            self.ask(|reply| Command::PlanCreate { req: r, reply })
                .await?
        } else {
            policy::CreatePlan::default()
        };
        let plan_caller_cwd = plan.caller_cwd.clone();
        let plan_ws_cwd = plan.workspace_cwd.clone();
        let prepared = match (&req.workspace, plan) {
            (WorkspaceTarget::Directory(d), _) => {
                let (path, reuse) = (d.path.clone(), d.reuse);
                let (dir, repo) = blocking(move || {
                    let dir = workspaces::existing_dir("workspace.source.path", &path)?;
                    let repo = workspaces::repo_info(&dir);
                    Ok::<_, WorkspaceError>((dir, repo))
                })
                .await??;
                // Refused before the directory is registered: no workspace for an agent that
                // cannot exist.
                crate::store::paths::check_record_dir(&self.layout, &dir.display().to_string())
                    .map_err(|m| RuntimeError::invalid("cwd", m))?;
                Prepared::Directory { dir, repo, reuse }
            }
            (WorkspaceTarget::Worktree(w), plan) => {
                let repo = w.repo.clone().or(plan.worktree_repo).unwrap_or_default();
                if let Some(caller_cwd) = plan.caller_cwd.clone() {
                    self.check_worktree_reach(caller_cwd, repo.clone(), "workspace.source.repo")
                        .await?;
                }
                let layout = self.layout.clone();
                let target = w.target.clone();
                let created = blocking(move || {
                    workspaces::worktree::create(&layout, "workspace.source", &repo, &target)
                })
                .await??;
                Prepared::Worktree(Box::new(created))
            }
            (_, plan) => match plan.cwd_inside {
                Some((cwd, ws)) => {
                    let c = blocking(move || workspaces::cwd_inside("workspace.cwd", &cwd, &ws))
                        .await??;
                    Prepared::Existing { cwd: Some(c) }
                }
                None => Prepared::Existing { cwd: None },
            },
        };
        let made = prepared.made_worktree(&req);
        let reach = match (plan_caller_cwd, prepared.cwd(plan_ws_cwd.as_deref())) {
            (Some(caller_cwd), Some(cwd)) => Some(Box::new(self.reach_of(caller_cwd, cwd).await?)),
            _ => None,
        };
        // An agent may name an existing workspace only inside its own reach (SPEC 14): a
        // workspace id must not carry it where a path would not.
        if let (Caller::Agent(_), WorkspaceTarget::Existing(ExistingWorkspace { cwd: None, .. })) =
            (req.caller, &req.workspace)
        {
            if reach.as_ref().is_none_or(|r| r.reach == Reach::Outside) {
                return Err(RuntimeError::Forbidden {
                    field: "workspace.workspaceId".into(),
                    message: "that workspace is outside the calling agent's reach (it may name \
                              only a workspace inside the directory it may write)"
                        .into(),
                });
            }
        }
        let req = Box::new(req);
        let info = Box::new(info);
        // Answers only once the record is durable: an agent whose record cannot be written is
        // refused here, not lost at the next start.
        let created = self
            .ask(|reply| Command::CreateAgent {
                req,
                info,
                prepared,
                reach,
                reply,
            })
            .await;
        let (snap, durable) = match (created, made) {
            (Ok(x), _) => x,
            (Err(e), Some(made)) => {
                let layout = self.layout.clone();
                blocking(move || made.discard(&layout)).await?;
                return Err(e);
            }
            (Err(e), None) => return Err(e),
        };
        durable.wait(&self.writer).await?;
        Ok(snap)
    }

    /// Creates a git worktree workspace; `created_by` is the agent that asked, if one did (its
    /// create rate counts the worktree).
    async fn make_worktree(
        &self,
        repo: String,
        target: WorktreeTarget,
        created_by: Option<AgentId>,
        request: Option<String>,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        // An agent's worktrees count against its `createPerMinute` like its agents (SPEC 14),
        // checked before git makes anything.
        if let Some(caller) = created_by {
            self.ask(|reply| Command::CheckLimits {
                caller,
                creates_agent: false,
                reply,
            })
            .await?;
        }
        let new_branch = matches!(target, WorktreeTarget::BranchOff(_));
        let layout = self.layout.clone();
        let created =
            blocking(move || workspaces::worktree::create(&layout, "", &repo, &target)).await??;
        let created = Box::new(created);
        let made = MadeWorktree::new(created.clone(), new_branch);
        let registered = self
            .ask(|reply| Command::RegisterWorktree {
                created,
                created_by,
                request,
                reply,
            })
            .await;
        if registered.is_err() {
            // Refused in the step that counts (another create took the last slot meanwhile).
            let layout = self.layout.clone();
            blocking(move || made.discard(&layout)).await?;
        }
        registered
    }

    /// Creates a git worktree workspace for `caller` (the `create_worktree` tool): from the
    /// repository containing `repo`, by default the calling agent's cwd.
    pub(crate) async fn create_worktree(
        &self,
        caller: Caller,
        repo: Option<String>,
        target: WorktreeTarget,
        request: Option<String>,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        let repo = match (repo, caller) {
            (Some(r), _) => r,
            (None, Caller::Agent(id)) => {
                let mut req = CreateAgent::new("", WorkspaceTarget::worktree(None, target.clone()));
                req.caller = caller;
                let r = Box::new(req);
                let plan = self
                    .ask(|reply| Command::PlanCreate { req: r, reply })
                    .await?;
                plan.worktree_repo.ok_or_else(|| {
                    RuntimeError::invalid("", format!("the calling agent {id} no longer exists"))
                })?
            }
            (None, Caller::User) => {
                return Err(RuntimeError::invalid(
                    "repo",
                    "is required for a user-token session (there is no caller cwd to default \
                     to)",
                ))
            }
        };
        if let Caller::Agent(id) = caller {
            let (caller_cwd, _) = self.ask(|reply| Command::Workplace { id, reply }).await?;
            self.check_worktree_reach(caller_cwd, repo.clone(), "repo")
                .await?;
        }
        self.make_worktree(repo, target, caller.agent(), request)
            .await
    }

    /// Refuses an agent's worktree of a repository outside its reach (`field` names it).
    async fn check_worktree_reach(
        &self,
        caller_cwd: String,
        repo: String,
        field: &'static str,
    ) -> Result<(), RuntimeError> {
        // A path that is no absolute, existing folder gets git's own validation's error.
        if !Path::new(&repo).is_absolute() || !Path::new(&repo).is_dir() {
            return Ok(());
        }
        let hidden = self.hidden.clone();
        let shown = repo.clone();
        let ok = blocking(move || {
            workspaces::reach::may_make_worktree(Path::new(&caller_cwd), Path::new(&repo), &hidden)
        })
        .await?;
        if ok {
            Ok(())
        } else {
            Err(RuntimeError::invalid(
                field,
                format!(
                    "{shown} is outside the calling agent's reach: an agent makes worktrees only \
                     of its own repository or of one inside its folder"
                ),
            ))
        }
    }
}
