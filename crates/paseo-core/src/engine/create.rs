//! Creating agents, registering workspaces, detaching (SPEC 3): a new agent joins its parent's
//! track and starts its session; its first prompt waits for the session to be ready. Detach
//! removes the parent link and nothing else; re-attaching (its undo) only when it narrows.

use super::{AgentState, Effect, Engine, EngineError, NewAgent, Queued, SessionState};
use crate::model::{
    hold_reasons, AgentConfig, AgentId, AgentRecord, HoldReason, NotifyArm, ProjectRecord, Reach,
    Standing, Status, TurnInput, TurnOrigin, WorkspaceId, WorkspaceRecord, PARENT_LABEL,
};

impl Engine {
    /// Creates an agent (initializing) and asks for its session. The workspace and every agent
    /// it names (parent, creator, notice target) must exist and not be archived.
    pub fn create(&mut self, new: NewAgent) -> Result<AgentId, EngineError> {
        self.create_as(new, true)
    }

    /// Creates an agent whose first turn is about to be held for the user (SPEC 14): closed,
    /// with no session. Nothing of it runs before Allow, not even its CLI's start (which could
    /// run hooks the user never saw, or run unconfined); Allow starts the session and the turn.
    pub fn create_held(&mut self, new: NewAgent) -> Result<AgentId, EngineError> {
        self.create_as(new, false)
    }

    fn create_as(&mut self, new: NewAgent, start: bool) -> Result<AgentId, EngineError> {
        if self.agents.contains_key(&new.id) {
            return Err(EngineError::Duplicate(new.id));
        }
        match self.workspaces.get(&new.workspace_id) {
            None => return Err(EngineError::UnknownWorkspace(new.workspace_id)),
            Some(w) if w.is_archived() => {
                return Err(EngineError::WorkspaceArchived(new.workspace_id))
            }
            _ => {}
        }
        for other in [new.parent, new.created_by, new.notify]
            .into_iter()
            .flatten()
        {
            self.unarchived(other)?;
        }
        let now = self.now();
        let mut labels = new.labels;
        labels.remove(PARENT_LABEL);
        let mut record = AgentRecord {
            workspace_id: Some(new.workspace_id),
            title: new.title,
            labels: labels.into(),
            last_activity_at: Some(now),
            config: AgentConfig {
                unconfined: new.unconfined,
                ..new.config
            }
            .shared(),
            auto_archive: new.auto_archive,
            notify_on_finish: new.notify.is_some(),
            created_by: new.created_by,
            created_workspace_id: new.created_workspace_id,
            ..AgentRecord::new(
                new.id,
                new.provider,
                new.cwd,
                if start {
                    Status::Initializing
                } else {
                    Status::Closed
                },
                now,
            )
        };
        record.set_parent(new.parent);
        let id = record.id;
        let queued = new.initial_prompt.map(|p| Queued {
            input: TurnInput::Prompt(p),
            origin: match new.created_by {
                Some(c) => TurnOrigin::Agent(c),
                None => TurnOrigin::User,
            },
            arm: new.notify.map(NotifyArm::new),
        });
        if let Some(q) = &queued {
            record.notify_arm = q.arm.clone().map(Box::new);
        }
        let state = AgentState::new(
            Box::new(record),
            if start {
                SessionState::Starting
            } else {
                SessionState::None
            },
            queued,
            new.reads_prompts,
        );
        self.agents.insert(id, Box::new(state));
        self.index_child(id);
        self.adopt_root(id);
        self.touch(id);
        if start {
            self.out.effects.push(Effect::StartSession {
                agent: id,
                resume: None,
            });
        }
        Ok(id)
    }

    /// Adds or replaces a workspace (and its project).
    pub fn upsert_workspace(&mut self, ws: WorkspaceRecord, project: Option<ProjectRecord>) {
        if let Some(p) = project {
            self.projects.insert(p.project_id.clone(), p);
            self.out.projects_registry = true;
        }
        self.out.workspaces.insert(ws.workspace_id.clone());
        self.workspaces.insert(ws.workspace_id.clone(), ws);
        self.out.workspaces_registry = true;
    }

    /// Forgets a workspace no agent uses (one registered for an agent whose creation then
    /// failed in the same step, before anyone heard of it).
    pub fn forget_workspace(&mut self, ws: &WorkspaceId) {
        if self
            .agents
            .values()
            .any(|a| a.record.workspace_id.as_ref() == Some(ws))
        {
            return;
        }
        if self.workspaces.remove(ws).is_some() {
            self.out.workspaces.remove(ws);
            self.out.workspaces_registry = true;
        }
    }

    /// Names a workspace, or with `None` clears its name (SPEC 1 `name`): workspaces that
    /// share a directory are told apart by it. The name comes checked
    /// ([`crate::model::clean_workspace_name`]).
    pub fn rename_workspace(
        &mut self,
        id: &WorkspaceId,
        name: Option<String>,
    ) -> Result<(), EngineError> {
        let now = self.now();
        let w = self
            .workspaces
            .get_mut(id)
            .ok_or_else(|| EngineError::UnknownWorkspace(id.clone()))?;
        if w.is_archived() {
            return Err(EngineError::WorkspaceArchived(id.clone()));
        }
        w.name = name;
        w.updated_at = now;
        self.out.workspaces.insert(id.clone());
        self.out.workspaces_registry = true;
        Ok(())
    }

    /// Removes the parent label only: nothing stops, moves or restarts. Returns the former
    /// parent.
    pub fn detach(&mut self, id: AgentId) -> Result<AgentId, EngineError> {
        let a = self.unarchived_mut(id)?;
        let Some(parent) = a.parent else {
            return Err(EngineError::NotASubagent(id));
        };
        // The subtree's usage leaves every former ancestor's tree total (SPEC 3: from now on a
        // root): they are re-rendered with this step, not at their own next update.
        let used = !self.tree_usage(id).is_empty();
        if used {
            self.rerender_from(Some(parent));
        }
        self.unindex_child(id);
        let before = self.budget_parent(id);
        if let Some(a) = self.agents.get_mut(&id) {
            a.clear_parent();
        }
        self.budget_parent_changed(id, before);
        if used {
            self.index_tree_usage();
        }
        self.touch(id);
        self.out.tracks.insert(parent);
        self.reroot_subtree(id);
        Ok(parent)
    }
}

impl Engine {
    /// Undoes a detach (SPEC 3, 14): `id` goes back under `parent`, the agent that created it,
    /// only when that narrows power: powers never grow down a tree, so a child that acts
    /// without asking, works outside its parent's reach or runs unconfined under a contained
    /// parent stays a root. `reach` is where its cwd stands against the parent's, as the caller
    /// found it on disk. With `check`, only answers whether it may; nothing changes either way
    /// when it may not.
    pub fn reattach(
        &mut self,
        id: AgentId,
        parent: AgentId,
        reach: Reach,
        check: bool,
    ) -> Result<(), EngineError> {
        let refuse = |why: String| EngineError::NotReattachable { id, parent, why };
        let a = self.unarchived(id)?;
        if a.parent.is_some() {
            return Err(refuse("it already has a parent".into()));
        }
        if a.record.created_by != Some(parent) {
            return Err(refuse(
                "only the agent that created it can take it back".into(),
            ));
        }
        let p = self.unarchived(parent)?;
        // The parent must not sit in the agent's own subtree: that would make a cycle.
        let mut cur = Some(parent);
        let mut hops = 0usize;
        while let Some(c) = cur {
            if c == id || hops > self.agents.len() {
                return Err(refuse("the parent is one of its own subagents".into()));
            }
            hops += 1;
            cur = self.agents.get(&c).and_then(|s| s.parent);
        }
        let mine = Standing {
            power: self.power_of(p),
            contained: self.contained(p),
        };
        let theirs = Standing {
            power: self.power_of(a),
            contained: self.contained(a),
        };
        let (pcwd, cwd) = (p.record.cwd.to_string(), a.record.cwd.to_string());
        let why: Vec<String> = hold_reasons(mine, theirs, reach, &pcwd, &cwd)
            .into_iter()
            .map(|r| match r {
                HoldReason::WiderMode => {
                    "it acts without asking, while its parent asks first".into()
                }
                HoldReason::OutsideReach { .. } => {
                    format!("it works in {cwd}, outside what its parent may write ({pcwd})")
                }
                HoldReason::Unconfined => {
                    "it runs unconfined, while its parent is contained".into()
                }
            })
            .collect();
        if !why.is_empty() {
            return Err(refuse(why.join("; ")));
        }
        if check {
            return Ok(());
        }
        // Only its creator takes it back: its budget chain stays what it was (SPEC 18).
        let before = self.budget_parent(id);
        if let Some(a) = self.agents.get_mut(&id) {
            a.record.set_parent(Some(parent));
            a.parent = Some(parent);
        }
        self.budget_parent_changed(id, before);
        self.index_child(id);
        self.touch(id);
        self.out.tracks.insert(parent);
        // What runs below it now runs below its new ancestors too.
        self.mark_tracks_above(id);
        self.reroot_subtree(id);
        // Its subtree's usage joins the tree totals above it again.
        if !self.tree_usage(id).is_empty() {
            self.index_tree_usage();
            self.rerender_from(Some(parent));
        }
        Ok(())
    }
}
