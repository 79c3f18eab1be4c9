//! Prompts and turns (SPEC 2): idle or error → running when a turn starts, running → idle or
//! error when it ends; cancel waits for the provider's acknowledgement (or a timeout); opening
//! or prompting an agent clears its attention.

use super::hold::{keep_held, take_turn_arm, Ending};
use super::{
    clear_attention, clear_attention_unless_permission, require_attention, set_error, step, Effect,
    Engine, EngineError, Queued, SessionState,
};
use crate::model::NoticeOutcome;
use crate::model::{
    AgentId, AttentionReason, ItemKind, NewItem, NotifyArm, Status, TurnInput, TurnOrigin,
    TurnOutcome,
};

impl Engine {
    /// Sends a prompt. Idle or error with a live session → a turn starts now; closed (or no
    /// process) → the session is resumed and the prompt runs once it is ready. Busy agents
    /// refuse: a prompt never interrupts a running turn.
    pub fn prompt(
        &mut self,
        id: AgentId,
        text: String,
        origin: TurnOrigin,
        notify: Option<AgentId>,
    ) -> Result<(), EngineError> {
        // Initializing with nothing waiting (a closed agent waking up, SPEC 2): the prompt
        // waits for the session like a first prompt does.
        let (now, a) = self.turn_target(id, notify)?;
        if matches!(origin, TurnOrigin::User | TurnOrigin::Agent(_)) {
            a.record.last_user_message_at = Some(now);
        }
        clear_attention_unless_permission(&mut a.record);
        let q = Queued {
            input: TurnInput::Prompt(text),
            origin,
            arm: notify.map(NotifyArm::new),
        };
        self.begin(id, q);
        Ok(())
    }

    /// Starts `q` now if the session is live and idle, else queues it and (re)starts the session.
    pub(super) fn begin(&mut self, id: AgentId, q: Queued) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.session == SessionState::Live
            && matches!(a.record.last_status, Status::Idle | Status::Error)
        {
            self.start_turn(id, q);
            return;
        }
        a.record.notify_arm = q.arm.clone().map(Box::new);
        a.wait(q);
        if a.session == SessionState::None {
            a.record.last_error = None;
            self.start_session(id);
        }
        self.touch(id);
    }

    /// Starts the turn now: → running, numbered, re-armed with its turn number.
    pub(super) fn start_turn(&mut self, id: AgentId, q: Queued) {
        let item = match &q.input {
            TurnInput::Prompt(p) => NewItem::new(ItemKind::User, p.clone()),
            TurnInput::Notice(n) => NewItem::new(ItemKind::System, n.clone()),
        };
        self.start_turn_as(id, q, item);
    }

    /// Starts the turn now, shown on the timeline as `item`.
    pub(super) fn start_turn_as(&mut self, id: AgentId, q: Queued, item: NewItem) {
        // SPEC 18: an agent's turn waits while its tree's budget is used up (a notice was
        // checked before it left the inbox).
        if !matches!(q.input, TurnInput::Notice(_)) {
            if let Some(hold) = self.budget_gate(id, &q.origin, false, true) {
                self.hold_on_budget(id, q, hold);
                return;
            }
        }
        let now = self.now();
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        a.record.turn_count += 1;
        let turn = a.record.turn_count;
        step(&mut a.record, Status::Running);
        a.record.last_error = None;
        a.record.last_message = None;
        a.record.last_message_on_disk = false;
        a.record.last_activity_at = Some(now);
        a.cancel_requested = false;
        // A notice turn on an agent with a held turn (SPEC 4) carries no arm: the record's is
        // the held turn's and stays.
        if a.record.held_turn.is_none() || q.arm.is_some() {
            a.record.notify_arm = q.arm.clone().map(|arm| Box::new(NotifyArm { turn, ..arm }));
        }
        self.touch(id);
        self.timeline(id, item);
        self.out.effects.push(Effect::SendTurn {
            agent: id,
            input: q.input,
        });
    }

    /// The latest assistant text (or output tail) of the current turn.
    pub fn last_message(&mut self, id: AgentId, text: String) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        a.record.last_message = Some(text);
        a.record.last_message_on_disk = false;
        // Not worth a write of its own: it is persisted with the turn's end.
        Ok(())
    }

    /// A turn ended as the provider reports it.
    pub fn turn_ended(&mut self, id: AgentId, outcome: TurnOutcome) -> Result<(), EngineError> {
        let now = self.now();
        let to = match outcome {
            TurnOutcome::Failed { .. } => Status::Error,
            _ => Status::Idle,
        };
        let a = self.running_mut(id, to)?;
        a.pending_permission = None;
        a.cancel_requested = false;
        a.record.last_activity_at = Some(now);
        a.record.updated_at = now;
        let arm = take_turn_arm(a);
        match outcome {
            TurnOutcome::Failed { message, detail } => {
                let full = match detail {
                    Some(d) => format!("{message}: {d}"),
                    None => message.clone(),
                };
                set_error(&mut a.record, &full, now);
                keep_held(a, now);
                self.report_failure_shown(id, message, full, arm);
            }
            ended @ (TurnOutcome::Completed | TurnOutcome::Canceled) => {
                step(&mut a.record, Status::Idle);
                let reason = if ended == TurnOutcome::Canceled {
                    AttentionReason::Canceled
                } else {
                    AttentionReason::Finished
                };
                require_attention(&mut a.record, reason, now);
                keep_held(a, now);
                self.touch(id);
                let outcome = if ended == TurnOutcome::Canceled {
                    self.timeline(id, NewItem::new(ItemKind::System, "Turn canceled"));
                    NoticeOutcome::Canceled
                } else {
                    NoticeOutcome::Completed
                };
                if let Some(arm) = arm {
                    self.send_notice(id, arm, outcome, None);
                }
            }
        }
        self.after_terminal_turn(id, true);
        Ok(())
    }

    /// The user (or an authorized agent) asks to stop the current turn. The status changes only
    /// when the provider acknowledges (`turn_ended(Canceled)`) or [`Engine::cancel_timed_out`].
    /// A held turn (SPEC 14) is the agent's pending work too: it ends at once, never run, as a
    /// denial would end it but `canceled` (its caller hears that, autoArchive applies).
    /// Returns whether a turn was running.
    pub fn cancel(&mut self, id: AgentId) -> Result<bool, EngineError> {
        self.unarchived_mut(id)?;
        self.end_held(id, Ending::Canceled);
        let a = self.get_mut(id)?;
        if a.record.is_archived() {
            return Ok(false); // autoArchive took it with the held turn's end
        }
        match a.record.last_status {
            Status::Running => {
                a.cancel_requested = true;
                let turn = a.record.turn_count;
                self.out.effects.push(Effect::Interrupt { agent: id, turn });
                self.out.agents.insert(id);
                Ok(true)
            }
            Status::Initializing if a.queued.is_some() => {
                // Nothing runs yet: the waiting input is dropped, the session still comes up.
                a.take_waiting();
                let arm = a.record.take_notify_arm();
                self.touch(id);
                if let Some(arm) = arm {
                    self.send_notice(id, arm, NoticeOutcome::Canceled, None);
                }
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    /// The provider did not acknowledge an interrupt in time: the runtime stopped the process;
    /// the turn counts as canceled.
    pub fn cancel_timed_out(&mut self, id: AgentId, turn: u64) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        if a.record.last_status != Status::Running || a.record.turn_count != turn {
            return Ok(()); // it ended meanwhile
        }
        a.session = SessionState::None;
        self.out.effects.push(Effect::CloseSession { agent: id });
        self.turn_ended(id, TurnOutcome::Canceled)
    }

    /// The agent is about to be used (SPEC 2: `closed → initializing` when used again): a
    /// closed agent with no process resumes its session now, so it is ready when the prompt
    /// comes. Anything else is left as it is. Returns whether a session was started.
    pub fn wake(&mut self, id: AgentId) -> Result<bool, EngineError> {
        let a = self.unarchived_mut(id)?;
        if a.record.last_status != Status::Closed || a.session != SessionState::None {
            return Ok(false);
        }
        self.start_session(id);
        self.touch(id);
        Ok(true)
    }

    /// The user opened the agent: its attention is seen (a pending permission stays).
    pub fn mark_seen(&mut self, id: AgentId) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        if a.record.requires_attention
            && a.record.attention_reason != Some(AttentionReason::Permission)
        {
            clear_attention(&mut a.record);
            self.touch(id);
        }
        Ok(())
    }
}

impl Engine {
    /// The agent a new turn is for, when it can take one (and whoever it notifies is unarchived),
    /// with the time of the request.
    pub(super) fn turn_target(
        &mut self,
        id: AgentId,
        notify: Option<AgentId>,
    ) -> Result<(crate::model::Timestamp, &mut super::AgentState), EngineError> {
        if let Some(n) = notify {
            self.unarchived(n)?;
        }
        let now = self.now();
        let a = self.unarchived_mut(id)?;
        refuse_if_busy(a)?;
        Ok((now, a))
    }
}

/// Refuses a new turn while one runs, one waits for the session, or one is held for the user.
fn refuse_if_busy(a: &super::AgentState) -> Result<(), EngineError> {
    let id = a.record.id;
    if a.record.held_turn.is_some() {
        return Err(EngineError::Busy {
            id,
            status: "waiting for the user to allow a held turn",
        });
    }
    let status = a.record.last_status;
    if status == Status::Running || a.queued.is_some() {
        return Err(EngineError::Busy {
            id,
            status: status.as_str(),
        });
    }
    Ok(())
}
