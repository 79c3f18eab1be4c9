//! Provider sessions (SPEC 2): a session comes up (initializing → idle), fails to start, dies
//! (→ error, never a silent idle), or is closed (any → closed) by an explicit stop or the app's
//! shutdown.

use super::hold::{keep_held, take_turn_arm};
use super::{
    clear_attention, set_error, step, AgentState, Effect, Engine, EngineError, SessionState,
};
use crate::model::NoticeOutcome;
use crate::model::{AgentId, AttentionReason, ItemKind, NewItem, NotifyArm, Status};

impl Engine {
    /// The provider session is ready: initializing → idle, then whatever was waiting runs.
    pub fn session_ready(&mut self, id: AgentId) -> Result<(), EngineError> {
        let a = self.unarchived_mut(id)?;
        a.session = SessionState::Live;
        match a.record.last_status {
            Status::Initializing => {
                step(&mut a.record, Status::Idle);
                self.touch(id);
            }
            // A late or repeated ready changes nothing else.
            Status::Idle | Status::Running | Status::Error | Status::Closed => {}
        }
        self.after_idle_boundary(id);
        Ok(())
    }

    /// The session could not start: initializing → error, the waiting input is dropped.
    pub fn session_failed(&mut self, id: AgentId, message: &str) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.unarchived_mut(id)?;
        a.session = SessionState::None;
        let queued = a.take_waiting();
        // Only a turn that was waiting for this session owes its notice; a held turn still
        // waits for the user (Allow starts the session again).
        let arm = if queued.is_some() {
            take_turn_arm(a)
        } else {
            None
        };
        set_error(&mut a.record, message, now);
        keep_held(a, now);
        self.report_failure(id, message.to_string(), arm);
        Ok(())
    }

    /// The provider's session id became known: stored for resume.
    pub fn session_id(&mut self, id: AgentId, session_id: String) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        let p = a.record.persistence.get_or_insert_with(Default::default);
        if p.session_id.as_deref() != Some(session_id.as_str()) {
            p.session_id = Some(session_id);
            self.touch(id);
        }
        Ok(())
    }

    pub fn mcp_status(&mut self, id: AgentId, status: String) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        a.note(|n| n.mcp_status = Some(status.into()));
        self.out.agents.insert(id);
        Ok(())
    }

    /// The session's process died. Mid-turn → error (turn failed); between turns → error
    /// (reported, never a silent idle); after we closed it → nothing.
    pub fn session_exited(&mut self, id: AgentId, message: &str) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.get_mut(id)?;
        if a.record.is_archived() || a.record.last_status == Status::Closed {
            a.session = SessionState::None;
            return Ok(());
        }
        let queued = a.end_session();
        let was = a.record.last_status;
        // A held turn never ran in this process: it stays held, its notice still owed.
        let arm = take_turn_arm(a);
        let msg = format!("the agent process exited: {message}");
        // A turn that just failed already carries its message (providers report the failed
        // turn, then the exit): keep it and only note that the process is gone.
        if was != Status::Error || queued.is_some() {
            set_error(&mut a.record, &msg, now);
        }
        keep_held(a, now);
        self.report_failure(id, msg, arm);
        self.after_terminal_turn(id, was == Status::Running);
        Ok(())
    }

    /// A write of the agent's record or timeline failed (a full disk…): the agent goes `error`
    /// with the reason and its process stops, so nothing keeps running that cannot be kept
    /// (SPEC 15). The same failure again changes nothing (its own error write may fail too).
    pub fn storage_failed(&mut self, id: AgentId, message: &str) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.get_mut(id)?;
        if a.record.is_archived()
            || (a.record.last_status == Status::Error
                && a.record.last_error.as_deref() == Some(message))
        {
            return Ok(());
        }
        let had_session = a.session != SessionState::None;
        let was = a.record.last_status;
        a.end_session();
        let arm = take_turn_arm(a);
        set_error(&mut a.record, message, now);
        keep_held(a, now);
        if had_session {
            self.out.effects.push(Effect::CloseSession { agent: id });
        }
        self.report_failure(id, message.to_string(), arm);
        self.after_terminal_turn(id, was == Status::Running);
        Ok(())
    }

    /// Stops the agent's session (explicit stop or app quit): any → closed. A running armed turn
    /// counts as canceled and notifies its parent (delivered later, never lost).
    pub fn close(&mut self, id: AgentId) -> Result<(), EngineError> {
        let quitting = self.shutting_down;
        let a = self.get_mut(id)?;
        if a.record.is_archived() {
            return Ok(());
        }
        let was = a.record.last_status;
        let had_session = a.session != SessionState::None;
        // At quit a waiting prompt stays, with its arm, for the next start (SPEC 15): it never
        // ran, so nothing stopped it.
        let queued = match a.end_session() {
            Some(q) if quitting && q.input.is_prompt() => {
                a.wait(q);
                None
            }
            other => other,
        };
        // A provider's request dies with its process; a held turn's outlives it (SPEC 14).
        if a.record.attention_reason == Some(AttentionReason::Permission)
            && a.record.held_turn.is_none()
        {
            clear_attention(&mut a.record);
        }
        // Any → closed (SPEC 2), an error included: what failed stays in `lastError`, and an
        // unseen failure keeps its attention.
        step(&mut a.record, Status::Closed);
        let arm = if was == Status::Running || queued.is_some() {
            take_turn_arm(a)
        } else {
            None
        };
        if was != Status::Closed {
            self.touch(id);
        }
        if had_session {
            self.out.effects.push(Effect::CloseSession { agent: id });
        }
        if let Some(arm) = arm {
            self.send_notice(
                id,
                arm,
                NoticeOutcome::Canceled,
                Some("the agent was stopped".into()),
            );
        }
        Ok(())
    }

    /// Closes an idle agent so `waiting`'s start gets its live slot (SPEC 14 `maxLiveAgents`),
    /// and says so in the closed agent's timeline: a user who finds it closed learns why, and
    /// that using it resumes it. Returns the news in one line naming both, for the windows'
    /// status bars.
    pub fn close_to_make_room(
        &mut self,
        id: AgentId,
        waiting: AgentId,
        limit: usize,
    ) -> Result<String, EngineError> {
        let closed = shown_name(&self.get_mut(id)?.record);
        let for_whom = self.agents.get(&waiting).map_or_else(
            || "a waiting agent".to_string(),
            |w| format!("'{}'", shown_name(&w.record)),
        );
        self.close(id)?;
        let text = format!(
            "Closed to make room for {for_whom} (live-agent limit {limit}, config.json \
             limits.maxLiveAgents); it resumes when you use it."
        );
        self.timeline(id, NewItem::new(ItemKind::System, text));
        // Shorter: a status bar is one line; the timeline has the setting's name and the rest.
        Ok(format!(
            "Closed '{closed}' to make room for {for_whom} (live-agent limit {limit})"
        ))
    }

    /// App quit: every session closes; notices queue but wake nobody.
    pub fn shutdown(&mut self) {
        self.shutting_down = true;
        let mut ids: Vec<AgentId> = self
            .agents
            .values()
            .filter(|a| !a.record.is_archived())
            .filter(|a| {
                a.session != SessionState::None
                    || matches!(a.status(), Status::Idle | Status::Error)
                    || a.status().is_active()
            })
            .map(|a| a.record.id)
            .collect();
        ids.sort();
        for id in ids {
            let _ = self.close(id);
        }
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Starts (or resumes, by its stored session id) the agent's session: → initializing. The
    /// caller marks the agent changed.
    pub(super) fn start_session(&mut self, id: AgentId) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        a.session = SessionState::Starting;
        step(&mut a.record, Status::Initializing);
        let resume = a
            .record
            .persistence
            .as_ref()
            .and_then(|p| p.session_id.clone());
        self.out
            .effects
            .push(Effect::StartSession { agent: id, resume });
    }

    /// After an agent entered `error`: persist it, show the message in its timeline, and send
    /// the notice its armed turn owes.
    pub(super) fn report_failure(&mut self, id: AgentId, message: String, arm: Option<NotifyArm>) {
        self.report_failure_shown(id, message.clone(), message, arm);
    }

    /// The timeline says `shown`; the notice carries the `full` message (what the timeline
    /// shows as output besides `shown`).
    pub(super) fn report_failure_shown(
        &mut self,
        id: AgentId,
        shown: String,
        full: String,
        arm: Option<NotifyArm>,
    ) {
        self.touch(id);
        self.timeline(id, NewItem::new(ItemKind::Error, shown));
        if let Some(arm) = arm {
            self.send_notice(id, arm, NoticeOutcome::Failed, Some(full));
        }
    }

    /// The runtime holds this agent's start until a live slot frees (`Some(limit)`), or lets
    /// it go (`None`): shown in its snapshot so the user sees why it waits.
    pub fn set_waiting_for_slot(&mut self, id: AgentId, limit: Option<usize>) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.waiting_for_slot() != limit {
            a.note(|n| {
                n.waiting_for_slot = limit;
                if limit.is_none() {
                    n.queue_place = None;
                }
            });
            self.out.agents.insert(id);
            if let Some(p) = self.unarchived_parent(id) {
                self.out.tracks.insert(p);
            }
            // Queued is its own bucket (SPEC 14): its workspace's activity moves with it.
            self.refresh(id);
        }
    }

    /// Its place in the queue for a live slot (1: the next to start), shown with its status.
    pub fn set_queue_place(&mut self, id: AgentId, place: Option<usize>) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.queue_place() != place {
            a.note(|n| n.queue_place = place);
            self.out.agents.insert(id);
            if let Some(p) = self.unarchived_parent(id) {
                self.out.tracks.insert(p);
            }
        }
    }

    /// The runtime counted what the agent changed on disk: shown in its track row and the
    /// workspace home (re-rendered, not a record change).
    pub fn set_changes(&mut self, id: AgentId, counts: Option<crate::model::ChangeCounts>) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.changes.as_deref() != counts.as_ref() {
            a.changes = counts.map(Box::new);
            self.out.agents.insert(id);
            if let Some(p) = self.unarchived_parent(id) {
                self.out.tracks.insert(p);
            }
        }
    }
}

/// How the user knows an agent: its title, else its provider and the start of its id (as the
/// windows name it).
fn shown_name(r: &crate::model::AgentRecord) -> String {
    let title = r.title.trim();
    if title.is_empty() {
        let id = r.id.to_string();
        format!("{} {}", r.provider, id.get(..8).unwrap_or(&id))
    } else {
        title.to_string()
    }
}

/// What the runtime tells the engine about an agent's session and its start, never stored: of
/// 100,000 agents a few have any of it, so it lives in one box, absent for the rest (48 bytes
/// less per agent than as fields of [`AgentState`], docs/scale.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct RuntimeNotes {
    /// What its MCP client last reported.
    mcp_status: Option<Box<str>>,
    /// `Some(limit)` while its start waits for one of the `limit` live slots (SPEC 14
    /// `maxLiveAgents`), and its place in line (1: next).
    waiting_for_slot: Option<usize>,
    queue_place: Option<usize>,
}

impl AgentState {
    /// `Some(limit)` while its start waits for one of the `limit` live slots (SPEC 14
    /// `maxLiveAgents`).
    pub fn waiting_for_slot(&self) -> Option<usize> {
        self.notes.as_ref().and_then(|n| n.waiting_for_slot)
    }
    /// Its place in the line for a live slot (1: next).
    pub fn queue_place(&self) -> Option<usize> {
        self.notes.as_ref().and_then(|n| n.queue_place)
    }
    /// What its MCP client last reported.
    pub fn mcp_status(&self) -> Option<&str> {
        self.notes.as_ref().and_then(|n| n.mcp_status.as_deref())
    }
    /// Changes its notes; the box goes once nothing is left in it.
    pub(super) fn note(&mut self, change: impl FnOnce(&mut RuntimeNotes)) {
        let notes = self.notes.get_or_insert_with(Box::default);
        change(notes);
        if **notes == RuntimeNotes::default() {
            self.notes = None;
        }
    }
}
