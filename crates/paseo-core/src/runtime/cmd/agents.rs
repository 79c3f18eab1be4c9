//! The agent commands: each checks the caller, runs the engine operation and applies its
//! effects in the same actor step.

use super::super::actor::Actor;
use super::super::command::{Prepared, Target};
use super::super::durable::Durable;
use super::super::events::AgentSnapshot;
use super::super::policy::{self, Caller, Placement, ReachCheck};
use super::super::{CreateAgent, RuntimeError};
use crate::engine::{EngineError, RestoreScope};
use crate::model::{AgentId, Reach, WorkspaceId};
use crate::providers::ProviderInfo;

impl Actor {
    /// The whole create gesture: the caller's rules and defaults, the new workspace (if the
    /// handle prepared one), the agent, and its first prompt queued behind its session.
    pub(super) fn create(
        &mut self,
        req: CreateAgent,
        info: &ProviderInfo,
        prepared: Prepared,
        reach: Option<&ReachCheck>,
    ) -> Result<(AgentSnapshot, Durable), RuntimeError> {
        policy::precheck_create(&req)?;
        if let Caller::Agent(c) = req.caller {
            if self.engine.agent(c).is_none() {
                return Err(RuntimeError::invalid(
                    "",
                    format!("the calling agent {c} no longer exists"),
                ));
            }
        }
        // Limits on agents starting agents (SPEC 14), before a directory is registered; only
        // agent callers are limited (the user is not). The rate is taken last, so a refused
        // call counts nothing.
        if let Some(c) = req.caller.agent() {
            self.check_limits(c, true)?;
        }
        let mut new_workspace = None;
        let (checked, placed) = match prepared {
            Prepared::Existing { cwd } => (cwd, None),
            Prepared::Directory { dir, repo, reuse } => {
                match self.open_directory_workspace(&dir).filter(|_| reuse) {
                    // The directory's open workspace takes the agent, as if named by its id.
                    Some(ws) => (
                        None,
                        Some(Placement {
                            workspace: ws.workspace_id.clone(),
                            cwd: ws.cwd.clone(),
                            created: None,
                        }),
                    ),
                    None => {
                        // Registered, like a worktree, only once the agent is certain: a create
                        // refused by any later check leaves no workspace behind (SPEC 14).
                        let projects: Vec<_> = self.engine.projects().cloned().collect();
                        let (ws, project) = crate::workspaces::directory_workspace_with(
                            &dir,
                            repo,
                            &projects,
                            crate::model::Timestamp::now(),
                        );
                        let placed = Placement {
                            workspace: ws.workspace_id.clone(),
                            cwd: ws.cwd.clone(),
                            created: None,
                        };
                        new_workspace = Some((ws, project));
                        (None, Some(placed))
                    }
                }
            }
            Prepared::Worktree(created) => {
                // Registered only once the agent can be created: a refused create leaves no
                // workspace behind (the handle removes the worktree itself).
                let (ws, project) =
                    self.worktree_record(&created, req.caller.agent(), req.request.clone());
                let id = ws.workspace_id.clone();
                let placed = Placement {
                    workspace: id.clone(),
                    cwd: ws.cwd.clone(),
                    created: Some(id),
                };
                new_workspace = Some((ws, project));
                (None, Some(placed))
            }
        };
        let caller = req.caller;
        let asked = req.budget;
        let new = policy::resolve_create(&self.engine, req, info, checked, placed)?;
        // SPEC 18, before anything is made or counted: a child's budget fits in its tree's.
        let root = new.parent.is_none() && new.created_by.is_none();
        let budget = self.budget_of_new(caller, asked, root)?;
        // The store must be able to name the record's folder after the cwd (SPEC 15).
        crate::store::paths::check_record_dir(&self.layout, &new.cwd)
            .map_err(|m| RuntimeError::invalid("cwd", m))?;
        if let Some(c) = caller.agent() {
            let now = crate::model::Timestamp::now();
            self.create_rate
                .take(c, now, self.limits.create_per_minute)?;
        }
        // A first turn that would give the caller more power (a wider mode, a cwd outside its
        // reach, no sandbox around a contained caller) waits for the user (SPEC 14): the agent
        // is created without it and the turn is held on it, in this same step.
        let standing = policy::standing_of_new(&self.engine, &new);
        let mut new = new;
        let held = match policy::must_hold(&self.engine, caller, standing, &new.cwd, reach) {
            Some(hold) => new.initial_prompt.take().map(|p| (p, hold, new.notify)),
            None => None,
        };
        // Before the agent exists and its session starts: a record that cannot be written
        // refuses the create (SPEC 15). A few small file operations, once per create.
        crate::store::paths::probe_record_dir(&self.layout, &new.cwd)?;
        // A workspace made for this agent is named after it, so several in one directory
        // are told apart (SPEC 1 `name`).
        let registered = new_workspace.map(|(mut ws, project)| {
            let id = ws.workspace_id.clone();
            ws.name = crate::model::clean_workspace_name(&new.title)
                .ok()
                .flatten();
            self.engine.upsert_workspace(ws, project);
            id
        });
        let made = if held.is_some() {
            self.engine.create_held(new)
        } else {
            self.engine.create(new)
        };
        let id = match made {
            Ok(id) => id,
            Err(e) => {
                if let Some(ws) = registered {
                    self.engine.forget_workspace(&ws);
                }
                return Err(e.into());
            }
        };
        self.engine.give_budget(id, budget);
        if let Some((prompt, hold, notify)) = held {
            if let Err(e) = self.engine.hold_turn(id, prompt, hold, notify) {
                self.apply();
                return Err(e.into());
            }
        }
        self.apply();
        Ok((self.snap(id)?, self.durable(&[])))
    }

    /// The SPEC 14 limits on what `caller` may create now: its create rate, and for an agent
    /// the depth of the chain above it. Counts nothing.
    pub(super) fn check_limits(
        &mut self,
        caller: AgentId,
        creates_agent: bool,
    ) -> Result<(), RuntimeError> {
        if self.engine.agent(caller).is_none() {
            return Err(RuntimeError::invalid(
                "",
                format!("the calling agent {caller} no longer exists"),
            ));
        }
        if creates_agent {
            super::super::limits::check_depth(
                &self.limits,
                policy::depth_under(&self.engine, caller),
            )?;
        }
        let now = crate::model::Timestamp::now();
        self.create_rate.prune(now);
        self.create_rate
            .check(caller, now, self.limits.create_per_minute)
    }

    pub(super) fn prompt(
        &mut self,
        caller: Caller,
        to: Target,
        text: String,
        reach: Option<&ReachCheck>,
    ) -> Result<AgentSnapshot, RuntimeError> {
        let Target { id, origin, notify } = to;
        policy::authorize(&self.engine, caller, id, "prompt")?;
        let (standing, cwd) = self
            .engine
            .agent(id)
            .map(|a| {
                (
                    policy::standing_of(&self.engine, a),
                    a.record.cwd.to_string(),
                )
            })
            .ok_or(EngineError::UnknownAgent(id))?;
        match policy::must_hold(&self.engine, caller, standing, &cwd, reach) {
            // The caller always hears how a held turn ends (a denial included): it did not
            // wait for it, whatever it asked.
            Some(hold) => {
                let notify = notify.or(Some(hold.caller));
                self.engine.hold_turn(id, text, hold, notify)?
            }
            None => self.engine.prompt(id, text, origin, notify)?,
        }
        self.apply();
        self.snap(id)
    }

    pub(super) fn cancel(&mut self, caller: Caller, id: AgentId) -> Result<bool, RuntimeError> {
        policy::authorize(&self.engine, caller, id, "cancel")?;
        let r = self.engine.cancel(id)?;
        self.apply();
        Ok(r)
    }

    pub(super) fn archive(
        &mut self,
        caller: Caller,
        id: AgentId,
    ) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        policy::authorize(&self.engine, caller, id, "archive")?;
        let ids = self.engine.archive(id)?;
        self.apply();
        let d = self.durable(&ids);
        Ok((ids, d))
    }

    pub(super) fn archive_finished(
        &mut self,
        parent: AgentId,
    ) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        let kids = self.engine.finished_plan(parent)?.head_ids();
        let ids = self.engine.archive_many(&kids)?;
        self.apply();
        let d = self.durable(&ids);
        Ok((ids, d))
    }

    pub(super) fn detach(&mut self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        self.engine.detach(id)?;
        self.apply();
        self.snap(id)
    }

    /// The undo of a detach (SPEC 14: only when it narrows). A reach the handle found for other
    /// paths than the records hold now counts as outside, as for a held turn.
    pub(super) fn reattach(
        &mut self,
        id: AgentId,
        parent: AgentId,
        reach: &ReachCheck,
        check: bool,
    ) -> Result<(), RuntimeError> {
        let cwd = |a: AgentId| self.engine.agent(a).map(|s| s.record.cwd.to_string());
        let reach = if cwd(parent).as_deref() == Some(reach.caller_cwd.as_str())
            && cwd(id).as_deref() == Some(reach.cwd.as_str())
        {
            reach.reach
        } else {
            Reach::Outside
        };
        self.engine.reattach(id, parent, reach, check)?;
        if !check {
            self.apply();
        }
        Ok(())
    }

    /// `workspaces` are back on disk (the handle re-added them): they come back first, then
    /// the batch.
    pub(super) fn restore(
        &mut self,
        id: AgentId,
        as_root: bool,
        scope: RestoreScope,
        workspaces: &[WorkspaceId],
    ) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        self.unarchive_workspaces(workspaces)?;
        let ids = self.engine.restore_scoped(id, as_root, scope)?;
        self.apply();
        Ok((ids, self.durable(&[])))
    }

    pub(super) fn unarchive_workspaces(
        &mut self,
        workspaces: &[WorkspaceId],
    ) -> Result<(), RuntimeError> {
        for ws in workspaces {
            self.engine.unarchive_workspace(ws)?;
            self.apply();
        }
        Ok(())
    }

    pub(super) fn answer_permission(
        &mut self,
        id: AgentId,
        request_id: &str,
        allow: bool,
    ) -> Result<(), RuntimeError> {
        self.engine.answer_permission(id, request_id, allow)?;
        self.apply();
        Ok(())
    }

    pub(super) fn mark_seen(&mut self, id: AgentId) -> Result<(), RuntimeError> {
        self.engine.mark_seen(id)?;
        self.apply();
        Ok(())
    }

    pub(super) fn wake(&mut self, id: AgentId) -> Result<bool, RuntimeError> {
        let woke = self.engine.wake(id)?;
        self.apply();
        Ok(woke)
    }

    pub(super) fn stop(&mut self, id: AgentId) -> Result<Durable, RuntimeError> {
        self.engine.close(id)?;
        self.apply();
        Ok(self.durable(&[id]))
    }

    pub(super) fn deliver_pending(&mut self) {
        self.persist.release_deferred();
        self.write_deferred(false);
        self.engine.deliver_pending();
        self.apply();
    }
}
