//! Creating agents, registering workspaces, detaching (SPEC 3): a new agent joins its parent's
//! track and starts its session; its first prompt waits for the session to be ready. Detach
//! removes the parent link and nothing else.

use super::{AgentState, Effect, Engine, EngineError, NewAgent, Queued, SessionState};
use crate::model::{
    AgentConfig, AgentId, AgentRecord, NotifyArm, ProjectRecord, Status, TurnInput, TurnOrigin,
    WorkspaceId, WorkspaceRecord, PARENT_LABEL,
};

impl Engine {
    /// Creates an agent (initializing) and asks for its session. The workspace and every agent
    /// it names (parent, creator, notice target) must exist and not be archived.
    pub fn create(&mut self, new: NewAgent) -> Result<AgentId, EngineError> {
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
            self.live(other)?;
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
            ..AgentRecord::new(new.id, new.provider, new.cwd, Status::Initializing, now)
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
            SessionState::Starting,
            queued,
            new.reads_prompts,
        );
        self.agents.insert(id, Box::new(state));
        self.index_child(id);
        self.adopt_root(id);
        self.touch(id);
        self.out.effects.push(Effect::StartSession {
            agent: id,
            resume: None,
        });
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

    /// Removes the parent label only: nothing stops, moves or restarts. Returns the former
    /// parent.
    pub fn detach(&mut self, id: AgentId) -> Result<AgentId, EngineError> {
        let a = self.live_mut(id)?;
        let Some(parent) = a.parent else {
            return Err(EngineError::NotASubagent(id));
        };
        // The subtree's usage leaves every former ancestor's tree total (SPEC 3: from now on a
        // root): they are re-rendered with this step, not at their own next update.
        if !self.tree_usage(id).is_empty() {
            self.rerender_from(Some(parent));
        }
        self.unindex_child(id);
        if let Some(a) = self.agents.get_mut(&id) {
            a.clear_parent();
        }
        self.touch(id);
        self.out.tracks.insert(parent);
        self.reroot_subtree(id);
        Ok(parent)
    }
}
