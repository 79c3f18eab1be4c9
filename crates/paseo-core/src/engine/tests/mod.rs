//! Unit tests of the engine's rules, one behaviour each, in one file per operation: the
//! fixture here builds a small fleet in two workspaces with a frozen clock.

mod activity;
mod archive;
mod budget;
mod create;
mod hold;
mod load;
mod notice;
mod permission;
mod session;
mod turn;
mod usage;
mod waiting;

use super::{Effect, Engine, EngineError, NewAgent, Outcome, INTERRUPTED};
use crate::model::{
    AgentId, AgentRecord, AttentionReason, Bucket, ItemKind, PermissionRequest, ProjectId,
    ProjectRecord, Status, Timestamp, TurnInput, TurnOrigin, TurnOutcome, WorkspaceId,
    WorkspaceKind, WorkspaceRecord,
};

/// A directory workspace `id` in `/src/{id}`.
fn ws(id: &str) -> WorkspaceRecord {
    WorkspaceRecord::new(
        id.parse().unwrap(),
        "p1".parse::<ProjectId>().unwrap(),
        format!("/src/{id}"),
        WorkspaceKind::Directory,
        id.to_string(),
        Timestamp::from_millis(0),
    )
}

/// A permission request for `Bash`.
fn permission(request_id: &str) -> PermissionRequest {
    PermissionRequest {
        request_id: request_id.into(),
        kind: crate::model::PermissionKind::Tool,
        tool_name: "Bash".into(),
        input: serde_json::json!({"command": "ls"}),
        description: None,
        call_id: None,
    }
}

/// The effects of an outcome other than timeline items.
fn effects(o: &Outcome) -> Vec<&Effect> {
    o.effects
        .iter()
        .filter(|e| !matches!(e, Effect::Timeline { .. }))
        .collect()
}

/// An engine with workspaces `w1` and `w2` and a clock that moves only when told.
struct Fx {
    e: Engine,
    t: i64,
}

impl Fx {
    fn new() -> Fx {
        let mut e = Engine::new();
        e.set_clock(Some(Timestamp::from_millis(1_000)));
        e.upsert_workspace(ws("w1"), None);
        e.upsert_workspace(ws("w2"), None);
        let _ = e.take_outcome();
        Fx { e, t: 1_000 }
    }

    fn tick(&mut self) {
        self.t += 1;
        self.e.set_clock(Some(Timestamp::from_millis(self.t)));
    }

    /// A Claude agent in workspace `w`, a subagent of `parent` (created by it) if given.
    fn new_agent(&self, parent: Option<AgentId>, w: &str) -> NewAgent {
        NewAgent {
            title: "t".into(),
            parent,
            created_by: parent,
            ..NewAgent::new("claude", true, format!("/src/{w}"), w.parse().unwrap())
        }
    }

    /// Creates an agent and brings its session up (idle).
    fn idle(&mut self, parent: Option<AgentId>, w: &str) -> AgentId {
        self.tick();
        let id = self.e.create(self.new_agent(parent, w)).unwrap();
        self.e.session_ready(id).unwrap();
        let _ = self.e.take_outcome();
        id
    }

    /// The same, running a user turn.
    fn running(&mut self, parent: Option<AgentId>, w: &str) -> AgentId {
        let id = self.idle(parent, w);
        self.e
            .prompt(id, "go".into(), TurnOrigin::User, None)
            .unwrap();
        let _ = self.e.take_outcome();
        id
    }

    /// An agent created by `target` in `w1` (its subagent when `parent` is given), running a
    /// first turn armed to notify `target`. The outcome is left to the caller.
    fn armed(&mut self, parent: Option<AgentId>, target: AgentId) -> AgentId {
        self.tick();
        let mut n = self.new_agent(parent, "w1");
        n.created_by = Some(target);
        n.initial_prompt = Some("work".into());
        n.notify = Some(target);
        let id = self.e.create(n).unwrap();
        self.e.session_ready(id).unwrap();
        id
    }

    fn record(&self, id: AgentId) -> &AgentRecord {
        &self.e.agent(id).unwrap().record
    }

    /// Every agent's record, as the store would hold them.
    fn records(&self) -> Vec<AgentRecord> {
        self.e
            .agents()
            .map(|a| AgentRecord::clone(&a.record))
            .collect()
    }

    /// A fresh engine loading `records` with this fleet's workspaces, as after a restart.
    fn reload(&self, records: Vec<AgentRecord>) -> (Engine, super::LoadReport) {
        let mut e = Engine::new();
        let report = e.load(
            records,
            self.e.workspaces().cloned().collect(),
            vec![],
            vec![],
            &|_| true,
        );
        (e, report)
    }

    fn status(&self, id: AgentId) -> Status {
        self.e.agent(id).unwrap().status()
    }

    fn bucket(&self, w: &str) -> Option<Bucket> {
        self.e.workspace_bucket(&w.parse().unwrap())
    }

    /// The incremental activity index agrees with one computed from scratch.
    fn check_activity(&self) {
        assert_eq!(self.e.activity_snapshot(), self.e.recompute_activity());
        assert_eq!(self.e.subtrees_snapshot(), self.e.recompute_subtrees());
    }
}
