//! Who may do what, and what a request gets when it leaves something out (SPEC 8): the one
//! place for the rules the MCP tools and the UI used to decide on their own.
//!
//! A [`Caller`] is the user (the UI, or the MCP user token) or an agent (its own MCP token).
//! Rules that depend only on the caller's kind run before any slow work ([`precheck_create`],
//! [`prompt_route`]); rules that read the fleet run on the engine inside the actor step that
//! acts ([`authorize`], [`resolve_create`]), so nothing changes between decision and effect.

use std::path::PathBuf;

use super::{
    CreateAgent, CurrentWorkspace, ExistingWorkspace, RuntimeError, WorkspaceTarget,
    WorktreeWorkspace,
};
use crate::engine::{AgentState, Engine, EngineError, NewAgent};
use crate::model::{
    hold_reasons, AgentConfig, AgentId, Hold, Power, Reach, Standing, TurnOrigin, WorkspaceId,
    WorkspaceRecord,
};
use crate::providers::ProviderInfo;

/// Who a request comes from: `{"kind": "user"}` or `{"kind": "agent", "agentId": "…"}` on the
/// wire (the API's frames, SPEC 17).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "agentId", rename_all = "camelCase")]
pub enum Caller {
    /// The user: the UI, or an MCP session with the user token.
    #[default]
    User,
    /// An agent, through its own MCP token.
    Agent(AgentId),
}

impl Caller {
    pub fn agent(self) -> Option<AgentId> {
        match self {
            Caller::User => None,
            Caller::Agent(a) => Some(a),
        }
    }

    /// Whose turn a prompt from this caller is.
    pub fn origin(self) -> TurnOrigin {
        match self {
            Caller::User => TurnOrigin::User,
            Caller::Agent(a) => TurnOrigin::Agent(a),
        }
    }
}

/// The authorization rule: an agent may prompt, cancel or archive only itself, its
/// descendants and agents it created; the user may act on any agent. Reading is open to all.
pub fn authorize(
    engine: &Engine,
    caller: Caller,
    target: AgentId,
    verb: &str,
) -> Result<(), RuntimeError> {
    if engine.agent(target).is_none() {
        return Err(EngineError::UnknownAgent(target).into());
    }
    match caller {
        Caller::User => Ok(()),
        Caller::Agent(c) if engine.may_mutate(c, target) => Ok(()),
        Caller::Agent(c) => Err(RuntimeError::Forbidden {
            field: "agentId".into(),
            message: format!(
                "agent {c} may not {verb} agent {target}: an agent may {verb} only itself, its \
                 descendants and agents it created"
            ),
        }),
    }
}

/// How a prompt is sent: whether the caller waits for the turn, and whom its end notifies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptRoute {
    pub origin: TurnOrigin,
    pub background: bool,
    pub notify: Option<AgentId>,
}

/// An agent's prompt runs in the background by default and notifies it when the turn ends;
/// the user waits by default and cannot be notified.
pub fn prompt_route(
    caller: Caller,
    background: Option<bool>,
    notify_on_finish: Option<bool>,
) -> Result<PromptRoute, RuntimeError> {
    let background = background.unwrap_or(caller.agent().is_some());
    let notify = match (notify_on_finish, caller) {
        (Some(false), _) => None,
        (Some(true), Caller::Agent(c)) => Some(c),
        (None, Caller::Agent(c)) if background => Some(c),
        (None, _) => None,
        (Some(true), Caller::User) => return Err(not_an_agent()),
    };
    Ok(PromptRoute {
        origin: caller.origin(),
        background,
        notify,
    })
}

fn not_an_agent() -> RuntimeError {
    RuntimeError::invalid(
        "notifyOnFinish",
        "a user-token session is not an agent and cannot be notified",
    )
}

/// The create rules that need only the caller's kind, checked before any slow work.
pub fn precheck_create(req: &CreateAgent) -> Result<(), RuntimeError> {
    let agent = req.caller.agent().is_some();
    if req.subagent && !agent {
        return Err(RuntimeError::invalid(
            "relationship.kind",
            "\"subagent\" needs an agent-scoped session (the agent's own token); a user-token \
             session can only create detached agents",
        ));
    }
    if req.notify_on_finish == Some(true) && !agent {
        return Err(not_an_agent());
    }
    match &req.workspace {
        WorkspaceTarget::Current(_) if !agent => Err(RuntimeError::invalid(
            "workspace.kind",
            "\"current\" needs an agent-scoped session (the agent's own token); a user-token \
             session must create a workspace",
        )),
        WorkspaceTarget::Worktree(WorktreeWorkspace { repo: None, .. }) if !agent => {
            Err(RuntimeError::invalid(
                "workspace.source.repo",
                "is required for a user-token session (there is no caller cwd to default to)",
            ))
        }
        _ => Ok(()),
    }
}

/// The calling agent, which must still exist.
fn calling(engine: &Engine, caller: Caller) -> Result<Option<&AgentState>, RuntimeError> {
    match caller {
        Caller::User => Ok(None),
        Caller::Agent(c) => engine.agent(c).map(Some).ok_or_else(|| {
            RuntimeError::invalid("", format!("the calling agent {c} no longer exists"))
        }),
    }
}

/// What a create needs checked on disk before it can be applied.
#[derive(Clone, Debug, Default)]
pub struct CreatePlan {
    /// A working directory that must exist inside this workspace.
    pub cwd_inside: Option<(String, WorkspaceRecord)>,
    /// The repository a new worktree is made from.
    pub worktree_repo: Option<String>,
    /// The calling agent's cwd, against which the new agent's reach is checked (SPEC 14).
    pub caller_cwd: Option<String>,
    /// The cwd of an existing workspace the new agent works in at its root.
    pub workspace_cwd: Option<String>,
}

/// Resolves the defaults that slow work depends on: the caller's workspace and cwd for
/// `current`, and the repository of a worktree (the caller's cwd unless given).
pub fn plan_create(engine: &Engine, req: &CreateAgent) -> Result<CreatePlan, RuntimeError> {
    let me = calling(engine, req.caller)?;
    let mut plan = CreatePlan {
        caller_cwd: me.map(|a| a.record.cwd.to_string()),
        ..Default::default()
    };
    match &req.workspace {
        WorkspaceTarget::Current(CurrentWorkspace { cwd }) => {
            let (id, default_cwd) = caller_workspace(me)?;
            let ws = existing_workspace(engine, &id)?;
            plan.cwd_inside = Some((cwd.clone().unwrap_or(default_cwd), ws));
        }
        WorkspaceTarget::Existing(ExistingWorkspace { id, cwd: Some(c) }) => {
            let ws = existing_workspace(engine, id)?;
            plan.cwd_inside = Some((c.clone(), ws));
        }
        WorkspaceTarget::Existing(ExistingWorkspace { id, cwd: None }) if me.is_some() => {
            plan.workspace_cwd = Some(existing_workspace(engine, id)?.cwd);
        }
        WorkspaceTarget::Worktree(WorktreeWorkspace { repo, .. }) => {
            plan.worktree_repo = match (repo, me) {
                (Some(r), _) => Some(r.clone()),
                (None, Some(a)) => Some(a.record.cwd.to_string()),
                (None, None) => None,
            };
        }
        _ => {}
    }
    Ok(plan)
}

/// Whether a create must read the fleet before its slow work: always for an agent caller,
/// whose cwd the new agent's reach is checked against (SPEC 14).
pub fn needs_plan(req: &CreateAgent) -> bool {
    req.caller.agent().is_some()
        || matches!(
            req.workspace,
            WorkspaceTarget::Current(_)
                | WorkspaceTarget::Existing(ExistingWorkspace { cwd: Some(_), .. })
                | WorkspaceTarget::Worktree(WorktreeWorkspace { repo: None, .. })
        )
}

fn caller_workspace(me: Option<&AgentState>) -> Result<(WorkspaceId, String), RuntimeError> {
    let Some(a) = me else {
        return Err(RuntimeError::invalid(
            "workspace.kind",
            "\"current\" needs an agent-scoped session",
        ));
    };
    match &a.record.workspace_id {
        Some(w) => Ok((w.clone(), a.record.cwd.to_string())),
        None => Err(RuntimeError::invalid(
            "workspace.kind",
            "the calling agent has no workspace",
        )),
    }
}

fn existing_workspace(engine: &Engine, id: &WorkspaceId) -> Result<WorkspaceRecord, RuntimeError> {
    let ws = engine
        .workspace(id)
        .cloned()
        .ok_or_else(|| EngineError::UnknownWorkspace(id.clone()))?;
    if ws.is_archived() {
        return Err(EngineError::WorkspaceArchived(id.clone()).into());
    }
    Ok(ws)
}

/// Where the new agent works once the slow checks are done: the workspace and cwd.
pub struct Placement {
    pub workspace: WorkspaceId,
    pub cwd: String,
    /// Set when the workspace was made for this agent (a new worktree).
    pub created: Option<WorkspaceId>,
}

/// The full create decision, on the fleet as it is now: relationship, notification, where it
/// works (a checked cwd, or the caller's), and what it inherits. A new agent of the caller's
/// own provider inherits its mode, and its model unless one is given: "another one like me".
pub fn resolve_create(
    engine: &Engine,
    req: CreateAgent,
    info: &ProviderInfo,
    checked_cwd: Option<PathBuf>,
    placed: Option<Placement>,
) -> Result<NewAgent, RuntimeError> {
    precheck_create(&req)?;
    let me = calling(engine, req.caller)?;
    let caller = req.caller.agent();
    let parent = if req.subagent { caller } else { None };
    let notify = match req.notify_on_finish {
        Some(false) => None,
        _ => caller,
    };
    let cwd_of = |default: String| {
        checked_cwd
            .as_ref()
            .map(|c| c.display().to_string())
            .unwrap_or(default)
    };
    let (workspace_id, cwd, created_ws) = match (&req.workspace, placed) {
        (_, Some(p)) => (p.workspace, cwd_of(p.cwd), p.created),
        (WorkspaceTarget::Current(_), None) => {
            let (id, cwd) = caller_workspace(me)?;
            (id, cwd_of(cwd), None)
        }
        (WorkspaceTarget::Existing(ExistingWorkspace { id, .. }), None) => {
            let ws = existing_workspace(engine, id)?;
            (id.clone(), cwd_of(ws.cwd), None)
        }
        (WorkspaceTarget::Directory(_) | WorkspaceTarget::Worktree(_), None) => {
            return Err(RuntimeError::invalid(
                "workspace",
                "the new workspace was not prepared",
            ))
        }
    };
    let same = me.filter(|a| a.record.provider == req.provider);
    let model = req
        .model
        .or_else(|| same.and_then(|a| a.record.config.model.as_deref().map(str::to_string)));
    let mode = req
        .mode
        .or_else(|| same.and_then(|a| a.record.config.mode.as_deref().map(str::to_string)));
    let title = match req.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => default_title(&req.provider, req.initial_prompt.as_deref()),
    };
    Ok(NewAgent {
        id: AgentId::new(),
        provider: req.provider,
        reads_prompts: info.reads_prompts,
        cwd,
        workspace_id,
        title,
        config: AgentConfig {
            model: model.filter(|m| !m.trim().is_empty()).map(Into::into),
            mode: mode.filter(|m| !m.trim().is_empty()).map(Into::into),
            ..Default::default()
        },
        labels: req.labels,
        parent,
        created_by: caller,
        initial_prompt: req.initial_prompt,
        notify,
        auto_archive: req.auto_archive,
        created_workspace_id: created_ws,
        unconfined: req.unconfined,
    })
}

/// Where a turn's agent works against its agent caller, as the handle found it on disk
/// (`workspaces::reach::relate`) before it asked the actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReachCheck {
    /// The caller's cwd and the cwd of the agent the turn would run in, as compared.
    pub caller_cwd: String,
    pub cwd: String,
    pub reach: Reach,
}

/// SPEC 14: a turn that would run with more power than its agent caller has is held for the
/// user; this answers who asked, and why, when it must be. Power is the mode and the reach:
/// `new` is the turn's agent (its power and whether it is contained) working in `cwd`, and
/// `reach` where that stands against the caller's cwd. The user is never held, and equal or
/// lesser power never is. A caller that no longer exists counts as asking and contained; a
/// reach that was checked for other paths than the ones now in the records counts as outside.
pub fn must_hold(
    engine: &Engine,
    caller: Caller,
    new: Standing,
    cwd: &str,
    reach: Option<&ReachCheck>,
) -> Option<Hold> {
    let c = caller.agent()?;
    let (mine, my_cwd) = match engine.agent(c) {
        Some(a) => (
            Standing {
                power: engine.power_of(a),
                contained: engine.contained(a),
            },
            a.record.cwd.to_string(),
        ),
        None => (
            Standing {
                power: Power::Asks,
                contained: true,
            },
            String::new(),
        ),
    };
    let reach = match reach {
        Some(r) if r.caller_cwd == my_cwd && r.cwd == cwd => r.reach,
        _ if my_cwd == cwd && !my_cwd.is_empty() => Reach::Inside,
        _ => Reach::Outside,
    };
    let reasons = hold_reasons(mine, new, reach, &my_cwd, cwd);
    (!reasons.is_empty()).then_some(Hold {
        caller: c,
        caller_power: mine.power,
        power: new.power,
        reasons,
    })
}

/// How many agents stand above a new agent that `caller` creates: the caller and, up the
/// chain, the agent that created (or is the parent of) each. Counted through detached agents
/// too, so a loop of agents starting agents cannot escape `maxDepth` by detaching.
pub fn depth_under(engine: &Engine, caller: AgentId) -> usize {
    let mut n = 0;
    let mut cur = Some(caller);
    while let Some(c) = cur {
        n += 1;
        if n > 1_000_000 {
            break; // a cycle in damaged records; the limit refuses it anyway
        }
        cur = engine
            .agent(c)
            .and_then(|a| a.record.created_by.or(a.parent));
    }
    n
}

/// What a new agent will be: its power (its provider and its resolved mode) and whether it
/// will be contained (SPEC 16).
pub fn standing_of_new(engine: &Engine, new: &NewAgent) -> Standing {
    Standing {
        power: engine.power_for(&new.provider, &new.config),
        contained: engine.contained_as(&new.provider, new.unconfined),
    }
}

/// What an existing agent is, for a prompt to it.
pub fn standing_of(engine: &Engine, a: &AgentState) -> Standing {
    Standing {
        power: engine.power_of(a),
        contained: engine.contained(a),
    }
}

/// A new agent's title when none is given: the first line of its prompt, shortened.
pub fn default_title(provider: &str, prompt: Option<&str>) -> String {
    if let Some(p) = prompt {
        let line = p
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        if !line.is_empty() {
            let mut t: String = line.chars().take(60).collect();
            if line.chars().count() > 60 {
                t.push('…');
            }
            return t;
        }
    }
    format!("{provider} agent")
}
