//! The live-agent limit (SPEC 14 `maxLiveAgents`): a session start beyond it waits in a queue,
//! oldest first, and starts when a slot frees. The agent is created and answers at once; its
//! snapshot says it waits, so the user sees why (and an orchestrator starting 200 test agents
//! on a small machine neither freezes it nor fails). An idle agent's process is what usually
//! holds a slot: when starts wait, the idle agent quiet the longest is closed (resumable, as a
//! stop is) to make room, so a fleet of idle agents never blocks new work. Never the agent a
//! window shows (the user is looking at it), and never silently: the closed agent's timeline
//! and every window's status bar say why it closed.

use super::actor::Actor;
use super::events::Event;
use crate::engine::SessionState;
use crate::model::{AgentId, Status};

impl Actor {
    /// Starts the session now, or queues the start when every live slot is taken.
    pub(super) fn start_or_wait(&mut self, agent: AgentId, resume: Option<String>) {
        if self.defer_start(agent, &resume) {
            return;
        }
        let max = self.limits.max_live_agents;
        if self.sessions.has_slot(agent) || self.sessions.live() < max {
            self.start_session(agent, resume);
            return;
        }
        self.sessions.wait_in_line(agent, resume);
        self.engine.set_waiting_for_slot(agent, Some(max));
        self.number_queue();
    }

    /// Every waiting agent's place in line, shown with its status ("queued · 3rd").
    fn number_queue(&mut self) {
        let ids: Vec<AgentId> = self.sessions.line();
        for (i, id) in ids.into_iter().enumerate() {
            self.engine.set_queue_place(id, Some(i + 1));
        }
    }

    /// The agent no longer wants a start (closed, archived).
    pub(super) fn stop_waiting(&mut self, agent: AgentId) {
        if self.sessions.leave_line(agent) {
            self.engine.set_waiting_for_slot(agent, None);
            self.number_queue();
        }
    }

    /// Starts the oldest waiting agents while slots are free; whether any started.
    pub(super) fn fill_slots(&mut self) -> bool {
        let mut started = false;
        while self.sessions.live() < self.limits.max_live_agents {
            let Some((agent, resume)) = self.sessions.next_in_line() else {
                break;
            };
            // Only an agent still waiting for its session: one archived or stopped meanwhile
            // has nothing to start.
            let wants = self
                .engine
                .agent(agent)
                .is_some_and(|a| a.session == SessionState::Starting && !a.record.is_archived());
            self.engine.set_waiting_for_slot(agent, None);
            if wants {
                self.start_session(agent, resume);
            }
            started = true;
        }
        if started {
            self.number_queue();
        }
        if let Some(next) = self.sessions.first_in_line() {
            if let Some(idle) = self.quietest_idle() {
                tracing::info!(agent = %idle, waiting = %next, "closing an idle session for a waiting start");
                let limit = self.limits.max_live_agents;
                if let Ok(message) = self.engine.close_to_make_room(idle, next, limit) {
                    self.out.send(Event::ClosedForRoom {
                        agent_id: idle,
                        message,
                    });
                    started = true;
                }
            }
        }
        started
    }

    /// A window now shows `agent` (or no agent): the agent a user is looking at is never the
    /// one closed to make room, so a start that could only close it waits until it is not.
    /// (The agent no longer shown may be the room a waiting start needs: the `apply` after
    /// every command fills slots.)
    pub(super) fn set_shown(&mut self, window: String, agent: Option<AgentId>) {
        self.sessions.set_shown(window, agent);
    }

    /// The live idle agent with nothing pending that has been quiet the longest.
    fn quietest_idle(&self) -> Option<AgentId> {
        self.sessions
            .live_agents()
            .filter_map(|id| self.engine.agent(id))
            .filter(|a| {
                a.session == SessionState::Live
                    && a.record.last_status == Status::Idle
                    && a.queued.is_none()
                    && a.pending_permission.is_none()
                    && a.record.held_turn.is_none()
                    && self.engine.inbox(a.record.id).is_none_or(|q| q.is_empty())
                    && !self.sessions.is_shown(a.record.id)
            })
            .min_by_key(|a| (a.record.last_activity_at, a.record.id))
            .map(|a| a.record.id)
    }
}
