//! The provider sessions the actor owns: one slot per live agent (its generation, its session
//! once started, the input that arrived while it was starting), the closes still under way,
//! the starts waiting for a live slot (SPEC 14 `maxLiveAgents`, oldest first) and the agents
//! windows show. What the engine says about them is decided elsewhere ([`super::lifecycle`],
//! [`super::live`]); this only keeps them.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::model::AgentId;
use crate::providers::{EventSink, ProviderError, Session, SinkMessage, TurnInput};

/// Input for a session that is still starting.
pub(super) enum Buffered {
    Send(TurnInput),
    Interrupt,
    Permission(String, bool),
}

struct Slot {
    generation: u64,
    session: Option<Box<dyn Session>>,
    buffered: Vec<Buffered>,
}

/// What every session is started with (from the runtime's options).
pub(super) struct SessionOptions {
    pub(super) env: BTreeMap<String, String>,
    pub(super) cancel_timeout: Duration,
    pub(super) start_timeout: Duration,
    pub(super) sink_tx: mpsc::Sender<SinkMessage>,
}

pub(super) struct Sessions {
    opts: SessionOptions,
    slots: HashMap<AgentId, Slot>,
    next_generation: u64,
    /// Sessions closed while their start was still under way: closed on arrival.
    doomed: HashMap<(AgentId, u64), watch::Sender<bool>>,
    closing: HashMap<AgentId, watch::Receiver<bool>>,
    /// Starts waiting for a live slot, oldest first (the resume id each asked for).
    waiting: VecDeque<(AgentId, Option<String>)>,
    /// The agent each window shows (by window label): never closed to make room ([`super::live`]).
    shown: HashMap<String, AgentId>,
}

impl Sessions {
    pub(super) fn new(opts: SessionOptions) -> Sessions {
        Sessions {
            opts,
            slots: HashMap::new(),
            next_generation: 0,
            doomed: HashMap::new(),
            closing: HashMap::new(),
            waiting: VecDeque::new(),
            shown: HashMap::new(),
        }
    }

    pub(super) fn env(&self) -> &BTreeMap<String, String> {
        &self.opts.env
    }

    pub(super) fn cancel_timeout(&self) -> Duration {
        self.opts.cancel_timeout
    }

    pub(super) fn start_timeout(&self) -> Duration {
        self.opts.start_timeout
    }

    /// The sink a session of `generation` reports its events into.
    pub(super) fn sink(&self, agent: AgentId, generation: u64) -> EventSink {
        EventSink::new(agent, generation, self.opts.sink_tx.clone())
    }

    // ------------------------------------------------------------ slots

    /// Whether `generation` is `agent`'s current session (not one closed or replaced).
    pub(super) fn is_current(&self, agent: AgentId, generation: u64) -> bool {
        self.slots
            .get(&agent)
            .is_some_and(|s| s.generation == generation)
    }

    pub(super) fn has_slot(&self, agent: AgentId) -> bool {
        self.slots.contains_key(&agent)
    }

    /// How many live slots are taken.
    pub(super) fn live(&self) -> usize {
        self.slots.len()
    }

    pub(super) fn live_agents(&self) -> impl Iterator<Item = AgentId> + '_ {
        self.slots.keys().copied()
    }

    /// A new slot for a session about to start; answers its generation.
    pub(super) fn open(&mut self, agent: AgentId) -> u64 {
        self.next_generation += 1;
        let generation = self.next_generation;
        self.slots.insert(
            agent,
            Slot {
                generation,
                session: None,
                buffered: Vec::new(),
            },
        );
        generation
    }

    /// Takes `agent`'s slot away: its generation, and its session if it had started.
    pub(super) fn remove(&mut self, agent: AgentId) -> Option<(u64, Option<Box<dyn Session>>)> {
        self.slots.remove(&agent).map(|s| (s.generation, s.session))
    }

    /// The current start returned its session: the input buffered meanwhile goes to it first.
    /// On a refusal the slot is gone and the session comes back, to be closed.
    pub(super) fn started(
        &mut self,
        agent: AgentId,
        mut session: Box<dyn Session>,
    ) -> Result<(), (ProviderError, Box<dyn Session>)> {
        let buffered = match self.slots.get_mut(&agent) {
            Some(slot) => std::mem::take(&mut slot.buffered),
            None => Vec::new(),
        };
        for b in buffered {
            if let Err(e) = deliver(session.as_mut(), b) {
                self.slots.remove(&agent);
                return Err((e, session));
            }
        }
        if let Some(slot) = self.slots.get_mut(&agent) {
            slot.session = Some(session);
        }
        Ok(())
    }

    /// Gives `b` to `agent`'s session, or keeps it until the session has started. `Err`: the
    /// session refused it (the caller closes it).
    pub(super) fn feed(&mut self, agent: AgentId, b: Buffered) -> Result<(), ProviderError> {
        let Some(slot) = self.slots.get_mut(&agent) else {
            tracing::warn!(%agent, "no session for a turn effect; ignored");
            return Ok(());
        };
        let Some(s) = slot.session.as_mut() else {
            slot.buffered.push(b);
            return Ok(());
        };
        deliver(s.as_mut(), b)
    }

    // ------------------------------------------------------------ closes

    /// Closes `s` off the actor; [`Self::closes`] waits for it.
    pub(super) fn close(&mut self, agent: AgentId, s: Box<dyn Session>) {
        let (tx, rx) = watch::channel(false);
        self.closing.insert(agent, rx);
        tokio::spawn(async move {
            s.close().await;
            let _ = tx.send(true);
        });
    }

    /// The start of `generation` is still under way: its session is closed when it returns.
    pub(super) fn doom(&mut self, agent: AgentId, generation: u64) {
        let (tx, rx) = watch::channel(false);
        self.doomed.insert((agent, generation), tx);
        self.closing.insert(agent, rx);
    }

    /// What to tell once the doomed start of `generation` is closed.
    pub(super) fn take_doomed(
        &mut self,
        agent: AgentId,
        generation: u64,
    ) -> Option<watch::Sender<bool>> {
        self.doomed.remove(&(agent, generation))
    }

    /// The close under way of each of `ids` that has one.
    pub(super) fn closes(&self, ids: &[AgentId]) -> Vec<(AgentId, watch::Receiver<bool>)> {
        ids.iter()
            .filter_map(|id| self.closing.get(id).map(|rx| (*id, rx.clone())))
            .collect()
    }

    pub(super) fn all_closes(&self) -> Vec<watch::Receiver<bool>> {
        self.closing.values().cloned().collect()
    }

    // ------------------------------------------------------------ the line for a live slot

    /// Puts `agent` in line (or updates what it resumes if it is already there).
    pub(super) fn wait_in_line(&mut self, agent: AgentId, resume: Option<String>) {
        match self.waiting.iter_mut().find(|(a, _)| *a == agent) {
            Some(w) => w.1 = resume,
            None => self.waiting.push_back((agent, resume)),
        }
    }

    /// Takes `agent` out of the line; whether it was in it.
    pub(super) fn leave_line(&mut self, agent: AgentId) -> bool {
        let before = self.waiting.len();
        self.waiting.retain(|(a, _)| *a != agent);
        self.waiting.len() != before
    }

    /// The oldest waiting start, out of the line.
    pub(super) fn next_in_line(&mut self) -> Option<(AgentId, Option<String>)> {
        self.waiting.pop_front()
    }

    /// The oldest waiting agent, left in line.
    pub(super) fn first_in_line(&self) -> Option<AgentId> {
        self.waiting.front().map(|(a, _)| *a)
    }

    /// The waiting agents in their order.
    pub(super) fn line(&self) -> Vec<AgentId> {
        self.waiting.iter().map(|(a, _)| *a).collect()
    }

    // ------------------------------------------------------------ what windows show

    pub(super) fn set_shown(&mut self, window: String, agent: Option<AgentId>) {
        match agent {
            Some(a) => self.shown.insert(window, a),
            None => self.shown.remove(&window),
        };
    }

    pub(super) fn is_shown(&self, agent: AgentId) -> bool {
        self.shown.values().any(|s| *s == agent)
    }
}

fn deliver(s: &mut dyn Session, b: Buffered) -> Result<(), ProviderError> {
    match b {
        Buffered::Send(input) => s.send(input),
        Buffered::Interrupt => s.interrupt(),
        Buffered::Permission(id, allow) => s.respond_permission(&id, allow),
    }
}
