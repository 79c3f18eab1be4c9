//! Property tests: random sequences of lifecycle operations (create with random relationships
//! and workspaces, sessions, turns, permissions, turns held for the user (SPEC 14), process
//! deaths, cancel, detach, archive, restore, close, and restarts that reload everything from
//! disk), checking the invariants of SPEC 1–7 and 14 after every step.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use paseo_core::engine::{Effect, Engine, NewAgent, Outcome};
use paseo_core::model::{
    AgentId, AgentRecord, Hold, HoldReason, PermissionRequest, Power, ProjectId, Status, Timestamp,
    TurnInput, TurnOrigin, TurnOutcome, WorkspaceId, WorkspaceKind, WorkspaceRecord,
};
use paseo_core::store::{self, atomic, Layout};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Create {
        parent: Option<u8>,
        creator: Option<u8>,
        ws: u8,
        prompt: bool,
        notify: bool,
        auto: bool,
    },
    Ready(u8),
    Prompt {
        a: u8,
        from: Option<u8>,
    },
    End {
        a: u8,
        how: u8,
    },
    Perm(u8),
    /// A turn on `a`, asked for by `from`, held for the user and armed to notify `from`.
    Hold {
        a: u8,
        from: u8,
    },
    Answer(u8, bool),
    Exit(u8),
    Cancel(u8),
    CancelTimeout(u8),
    Detach(u8),
    Archive(u8),
    Restore(u8, bool),
    ArchiveFinished(u8),
    Close(u8),
    Seen(u8),
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (proptest::option::of(any::<u8>()), proptest::option::of(any::<u8>()), 0u8..3, any::<bool>(), any::<bool>(), proptest::bool::weighted(0.15))
            .prop_map(|(parent, creator, ws, prompt, notify, auto)| Op::Create { parent, creator, ws, prompt, notify, auto }),
        4 => any::<u8>().prop_map(Op::Ready),
        3 => (any::<u8>(), proptest::option::of(any::<u8>())).prop_map(|(a, from)| Op::Prompt { a, from }),
        4 => (any::<u8>(), 0u8..3).prop_map(|(a, how)| Op::End { a, how }),
        1 => any::<u8>().prop_map(Op::Perm),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(a, from)| Op::Hold { a, from }),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(a, b)| Op::Answer(a, b)),
        1 => any::<u8>().prop_map(Op::Exit),
        1 => any::<u8>().prop_map(Op::Cancel),
        1 => any::<u8>().prop_map(Op::CancelTimeout),
        1 => any::<u8>().prop_map(Op::Detach),
        2 => any::<u8>().prop_map(Op::Archive),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(a, b)| Op::Restore(a, b)),
        1 => any::<u8>().prop_map(Op::ArchiveFinished),
        1 => any::<u8>().prop_map(Op::Close),
        1 => any::<u8>().prop_map(Op::Seen),
        1 => Just(Op::Restart),
    ]
}

/// A notice owed by an arm that ended.
struct Owed {
    target: AgentId,
    /// The target was archived at some point since: the notice may have been dropped.
    droppable: bool,
}

struct Harness {
    _dir: tempfile::TempDir,
    layout: Layout,
    e: Engine,
    clock: i64,
    paths: HashMap<AgentId, PathBuf>,
    owed: HashMap<String, Owed>,
    delivered: HashMap<String, usize>,
    /// Each held turn still held (by its request id) and the arm it owes.
    held: HashMap<AgentId, (String, String)>,
}

fn ws(i: u8) -> WorkspaceRecord {
    WorkspaceRecord {
        workspace_id: format!("w{i}").parse().unwrap(),
        project_id: "p".parse::<ProjectId>().unwrap(),
        cwd: format!("/src/w{}", i % 2), // w0 and w2 share a directory
        kind: WorkspaceKind::Directory,
        display_name: format!("w{i}"),
        name: None,
        created_at: Timestamp::from_millis(0),
        updated_at: Timestamp::from_millis(0),
        archived_at: None,
        repo: None,
        branch: None,
        created_by_agent_id: None,
        created_by_request: None,
        extra: Default::default(),
    }
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let mut h = Harness {
            _dir: dir,
            layout,
            e: Engine::new(),
            clock: 1_000,
            paths: HashMap::new(),
            owed: HashMap::new(),
            delivered: HashMap::new(),
            held: HashMap::new(),
        };
        h.e.set_clock(Some(Timestamp::from_millis(h.clock)));
        for i in 0..3 {
            h.e.upsert_workspace(ws(i), None);
        }
        let out = h.e.take_outcome();
        h.persist(out);
        h
    }

    fn ids(&self) -> Vec<AgentId> {
        let mut v: Vec<_> = self
            .e
            .agents()
            .map(|a| (a.record.created_at, a.record.id))
            .collect();
        v.sort();
        v.into_iter().map(|(_, id)| id).collect()
    }

    fn pick(&self, i: u8) -> Option<AgentId> {
        let ids = self.ids();
        (!ids.is_empty()).then(|| ids[i as usize % ids.len()])
    }

    fn arms(&self) -> HashMap<AgentId, (String, AgentId)> {
        self.e
            .agents()
            .filter_map(|a| {
                a.record
                    .notify_arm
                    .as_ref()
                    .map(|x| (a.record.id, (x.id.clone(), x.target_agent_id)))
            })
            .collect()
    }

    /// Writes what changed, like the runtime does, and records notice deliveries.
    fn persist(&mut self, out: Outcome) {
        for e in &out.effects {
            if let Effect::SendTurn {
                input: TurnInput::Notice(text),
                ..
            } = e
            {
                let id = text
                    .split("id=\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .expect("notice id")
                    .to_string();
                *self.delivered.entry(id).or_default() += 1;
            }
        }
        for id in &out.agents {
            let a = self.e.agent(*id).unwrap();
            let p = self
                .paths
                .entry(*id)
                .or_insert_with(|| self.layout.record_path(&a.record.cwd, *id))
                .clone();
            atomic::write_atomic(&p, &store::encode_record(&a.record).unwrap()).unwrap();
        }
        for id in &out.inboxes {
            let p = self.layout.inbox_path(*id);
            match self.e.inbox(*id) {
                Some(q) if !q.is_empty() => {
                    let v: Vec<_> = q.iter().cloned().collect();
                    atomic::write_atomic(&p, &store::encode_inbox(&v).unwrap()).unwrap();
                }
                _ => atomic::remove_durable(&p).unwrap(),
            }
        }
        if out.workspaces_registry {
            atomic::write_atomic(
                &self.layout.workspaces_path(),
                &store::encode_workspaces(self.e.workspaces()).unwrap(),
            )
            .unwrap();
        }
    }

    fn restart(&mut self) {
        // Everything written so far is on disk; memory is thrown away.
        let loaded = store::load_agents(&self.layout).unwrap();
        assert!(loaded.quarantined.is_empty(), "{:?}", loaded.quarantined);
        let reg = store::load_registry(&self.layout);
        let (inboxes, q) = store::load_inboxes(&self.layout);
        assert!(q.is_empty());
        self.paths = loaded
            .records
            .iter()
            .map(|r| (r.record.id, r.path(&self.layout)))
            .collect();
        let mut e = Engine::new();
        e.set_clock(Some(Timestamp::from_millis(self.clock)));
        let records = loaded.records.into_iter().map(|r| r.record);
        let report = e.load(records, reg.workspaces, reg.projects, inboxes, &|_| true);
        assert!(report.duplicates.is_empty());
        self.e = e;
        let out = self.e.take_outcome();
        self.persist(out);
        self.e.deliver_pending();
        let out = self.e.take_outcome();
        self.persist(out);
    }

    fn step(&mut self, op: &Op) {
        self.clock += 1;
        self.e.set_clock(Some(Timestamp::from_millis(self.clock)));
        let arms_before = self.arms();
        let archived_before: HashSet<AgentId> = self
            .e
            .agents()
            .filter(|a| a.record.is_archived())
            .map(|a| a.record.id)
            .collect();
        let mut cascade_check: Option<(AgentId, HashSet<AgentId>)> = None;
        match op.clone() {
            Op::Create {
                parent,
                creator,
                ws,
                prompt,
                notify,
                auto,
            } => {
                let parent = parent.and_then(|p| self.pick(p));
                let creator = parent.or(creator.and_then(|c| self.pick(c)));
                let n = NewAgent {
                    id: AgentId::new(),
                    provider: "p".into(),
                    reads_prompts: true,
                    cwd: format!("/src/w{}", ws % 2),
                    workspace_id: format!("w{ws}").parse::<WorkspaceId>().unwrap(),
                    title: "t".into(),
                    config: Default::default(),
                    labels: BTreeMap::new(),
                    parent,
                    created_by: creator,
                    initial_prompt: prompt.then(|| "go".to_string()),
                    notify: if notify { creator } else { None },
                    auto_archive: auto,
                    created_workspace_id: None,
                    unconfined: false,
                };
                let _ = self.e.create(n);
            }
            Op::Ready(i) => {
                if let Some(id) = self.pick(i) {
                    let starting = self.e.agent(id).unwrap().session
                        == paseo_core::engine::SessionState::Starting;
                    if starting {
                        self.e.session_ready(id).unwrap();
                    }
                }
            }
            Op::Prompt { a, from } => {
                if let Some(id) = self.pick(a) {
                    let from = from.and_then(|f| self.pick(f));
                    let origin = from.map(TurnOrigin::Agent).unwrap_or(TurnOrigin::User);
                    let _ = self.e.prompt(id, "go".into(), origin, from);
                }
            }
            Op::End { a, how } => {
                if let Some(id) = self.pick(a) {
                    let o = match how {
                        0 => TurnOutcome::Completed,
                        1 => TurnOutcome::Canceled,
                        _ => TurnOutcome::Failed {
                            message: "x".into(),
                            detail: None,
                        },
                    };
                    let _ = self.e.turn_ended(id, o);
                }
            }
            Op::Perm(a) => {
                if let Some(id) = self.pick(a) {
                    let r = PermissionRequest {
                        request_id: format!("r{}", self.clock),
                        kind: paseo_core::model::PermissionKind::Tool,
                        tool_name: "Bash".into(),
                        input: serde_json::json!({}),
                        description: None,
                        call_id: None,
                    };
                    let _ = self.e.permission_requested(id, r);
                }
            }
            Op::Hold { a, from } => {
                if let (Some(id), Some(from)) = (self.pick(a), self.pick(from)) {
                    let hold = Hold {
                        caller: from,
                        caller_power: Power::Asks,
                        power: Power::Full,
                        reasons: vec![HoldReason::WiderMode],
                    };
                    if self.e.hold_turn(id, "go".into(), hold, Some(from)).is_ok() {
                        let r = &self.e.agent(id).unwrap().record;
                        let request = r.held_turn.as_ref().unwrap().request_id.clone();
                        let arm = r.notify_arm.as_ref().unwrap().id.clone();
                        self.held.insert(id, (request, arm));
                    }
                }
            }
            Op::Answer(a, allow) => {
                if let Some(id) = self.pick(a) {
                    if let Some(p) = self.e.agent(id).unwrap().pending_permission.clone() {
                        self.e.answer_permission(id, &p.request_id, allow).unwrap();
                    }
                }
            }
            Op::Exit(a) => {
                if let Some(id) = self.pick(a) {
                    if self.e.agent(id).unwrap().session != paseo_core::engine::SessionState::None {
                        let _ = self.e.session_exited(id, "killed");
                    }
                }
            }
            Op::Cancel(a) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.cancel(id);
                }
            }
            Op::CancelTimeout(a) => {
                if let Some(id) = self.pick(a) {
                    let t = self.e.agent(id).unwrap().record.turn_count;
                    if self.e.agent(id).unwrap().cancel_requested {
                        let _ = self.e.cancel_timed_out(id, t);
                    }
                }
            }
            Op::Detach(a) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.detach(id);
                }
            }
            Op::Archive(a) => {
                if let Some(id) = self.pick(a) {
                    if !self.e.agent(id).unwrap().record.is_archived() {
                        cascade_check = Some((id, self.subtree(id)));
                    }
                    let _ = self.e.archive(id);
                }
            }
            Op::Restore(a, as_root) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.restore(id, as_root);
                }
            }
            Op::ArchiveFinished(a) => {
                if let Some(id) = self.pick(a) {
                    let kids = self
                        .e
                        .finished_plan(id)
                        .map(|p| p.head_ids())
                        .unwrap_or_default();
                    let _ = self.e.archive_many(&kids);
                }
            }
            Op::Close(a) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.close(id);
                }
            }
            Op::Seen(a) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.mark_seen(id);
                }
            }
            Op::Restart => {
                // A clean quit first (half the time), else a crash: memory is just dropped.
                if self.clock % 2 == 0 {
                    self.e.shutdown();
                    let out = self.e.take_outcome();
                    self.persist(out);
                }
                let arms = self.arms();
                self.restart();
                self.account_arms(arms);
                self.check(None, &archived_before);
                return;
            }
        }
        let out = self.e.take_outcome();
        self.persist(out);
        self.account_arms(arms_before);
        self.check(cascade_check, &archived_before);
    }

    /// Arms that ended during the step owe exactly one notice.
    fn account_arms(&mut self, before: HashMap<AgentId, (String, AgentId)>) {
        let after = self.arms();
        for (agent, (arm, target)) in before {
            if after.get(&agent).map(|x| &x.0) != Some(&arm) {
                self.owed.entry(arm).or_insert(Owed {
                    target,
                    droppable: false,
                });
            }
        }
    }

    /// The unarchived subtree below `id` by labels (what a cascade must archive).
    fn subtree(&self, id: AgentId) -> HashSet<AgentId> {
        let mut out = HashSet::from([id]);
        let mut stack = vec![id];
        while let Some(cur) = stack.pop() {
            for a in self.e.agents() {
                if !a.record.is_archived()
                    && a.record.parent_agent_id() == Some(cur)
                    && out.insert(a.record.id)
                {
                    stack.push(a.record.id);
                }
            }
        }
        out
    }

    fn check(
        &mut self,
        cascade: Option<(AgentId, HashSet<AgentId>)>,
        archived_before: &HashSet<AgentId>,
    ) {
        let e = &self.e;
        // No unarchived subagent under an archived parent.
        for a in e.agents() {
            if a.record.is_archived() {
                continue;
            }
            if let Some(p) = a.record.parent_agent_id().and_then(|p| e.agent(p)) {
                assert!(
                    !p.record.is_archived(),
                    "unarchived {} under archived {}",
                    a.record.id,
                    p.record.id
                );
            }
        }
        // A cascade archives the whole subtree and nothing else.
        if let Some((root, sub)) = cascade {
            let now_archived: HashSet<AgentId> = e
                .agents()
                .filter(|a| a.record.is_archived())
                .map(|a| a.record.id)
                .collect();
            let newly: HashSet<AgentId> =
                now_archived.difference(archived_before).copied().collect();
            let _ = root;
            // autoArchive cannot fire on an archive; the new set is exactly the subtree.
            assert_eq!(newly, sub, "cascade archived the wrong set");
        }
        // Incremental buckets equal recomputed ones.
        assert_eq!(e.activity_snapshot(), e.recompute_activity());
        assert_eq!(e.subtrees_snapshot(), e.recompute_subtrees());
        // Tracks hold exactly the unarchived children, oldest first; archived agents are in none.
        for a in e.agents() {
            let track = e.track(a.record.id);
            let mut want: Vec<(Timestamp, AgentId)> = e
                .agents()
                .filter(|c| {
                    !c.record.is_archived() && c.record.parent_agent_id() == Some(a.record.id)
                })
                .map(|c| (c.record.created_at, c.record.id))
                .collect();
            want.sort();
            let want: Vec<AgentId> = if a.record.is_archived() {
                Vec::new()
            } else {
                want.into_iter().map(|(_, id)| id).collect()
            };
            assert_eq!(track, want, "track of {}", a.record.id);
            for m in &track {
                assert!(!e.agent(*m).unwrap().record.is_archived());
            }
        }
        // Every record on disk parses and equals memory.
        let loaded = store::load_agents(&self.layout).unwrap();
        assert!(loaded.quarantined.is_empty());
        let disk: HashMap<AgentId, Box<AgentRecord>> = loaded
            .records
            .into_iter()
            .map(|r| (r.record.id, r.record))
            .collect();
        assert_eq!(disk.len(), e.agent_count());
        for a in e.agents() {
            assert_eq!(disk.get(&a.record.id), Some(&a.record), "disk differs");
        }
        // No finish notice lost or duplicated.
        for (arm, owed) in self.owed.iter_mut() {
            if e.agent(owed.target).is_none_or(|t| t.record.is_archived()) {
                owed.droppable = true;
            }
            let queued = e
                .inbox(owed.target)
                .map(|q| q.iter().filter(|n| &n.id == arm).count())
                .unwrap_or(0);
            let delivered = self.delivered.get(arm).copied().unwrap_or(0);
            let total = queued + delivered;
            assert!(
                total <= 1,
                "notice {arm} duplicated ({queued} queued, {delivered} delivered)"
            );
            if !owed.droppable {
                assert_eq!(total, 1, "notice {arm} to {} lost", owed.target);
            }
        }
        // SPEC 4, 14: a held turn stays answerable and keeps the arm it owes until it ends
        // (nothing around it, a notice turn, a session's end or a restart, reports it).
        self.held.retain(|id, (request, _)| {
            e.agent(*id).is_some_and(|a| {
                a.record
                    .held_turn
                    .as_ref()
                    .is_some_and(|h| &h.request_id == request)
            })
        });
        for (id, (_, arm)) in &self.held {
            let a = e.agent(*id).unwrap();
            assert!(!a.record.is_archived(), "{id} archived with a held turn");
            assert!(
                a.pending_permission.is_some() && a.needs_you(),
                "{id} held, not asking"
            );
            assert_eq!(
                a.record.notify_arm.as_ref().map(|x| &x.id),
                Some(arm),
                "held turn of {id} lost its arm"
            );
        }
        // Nothing runs without a session after a restart, and statuses are consistent.
        for a in e.agents() {
            if a.record.is_archived() {
                assert!(!a.record.last_status.is_active());
                assert!(!a.record.requires_attention);
            }
            if a.record.last_status == Status::Running {
                assert_ne!(a.session, paseo_core::engine::SessionState::None);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 2000, .. ProptestConfig::default() })]

    #[test]
    fn lifecycle_invariants_hold(ops in proptest::collection::vec(op(), 1..120)) {
        let mut h = Harness::new();
        for op in &ops {
            h.step(op);
        }
    }
}
