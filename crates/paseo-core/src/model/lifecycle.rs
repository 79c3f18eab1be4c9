//! SPEC 2's lifecycle as one table: which status an agent may go to from which. The engine
//! moves an agent's status only through this table (`engine::step`), and every test of the
//! engine checks each step against it.
//!
//! | from → to | when |
//! |---|---|
//! | initializing → idle | the provider session is ready |
//! | idle / error → running | a turn starts |
//! | running → idle | the turn ends (completed or canceled) |
//! | any → error | a turn fails, the session cannot start, the process dies; a denied held start or a failed write (SPEC 14, 15), a closed agent's too |
//! | any → closed | the runtime is closed (archive, quit, stop, an interruption found at load) |
//! | idle / error / closed → initializing | the agent is used again: its session starts (or resumes) |
//!
//! A step to the status an agent already has is no transition, and always allowed: a turn
//! that asks permission stays running, a second close changes nothing.

use super::agent::Status;

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Initializing,
        Status::Idle,
        Status::Running,
        Status::Error,
        Status::Closed,
    ];

    /// Whether SPEC 2 lets an agent go from `self` to `to` (see the module's table).
    pub fn can_go(self, to: Status) -> bool {
        use Status::*;
        self == to
            || matches!(
                (self, to),
                (Initializing, Idle)
                    | (Idle | Error, Running)
                    | (Running, Idle)
                    | (_, Error)
                    | (_, Closed)
                    | (Idle | Error | Closed, Initializing)
            )
    }

    /// The step from `self` to `to`, if the table has it.
    pub fn go(self, to: Status) -> Result<Status, Transition> {
        if self.can_go(to) {
            Ok(to)
        } else {
            Err(Transition { from: self, to })
        }
    }
}

/// A step the table does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    pub from: Status,
    pub to: Status,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair, against SPEC 2's table written out row by row.
    #[test]
    fn the_transition_table() {
        use Status::*;
        // (from, [to…]) besides staying put.
        let allowed: [(Status, &[Status]); 5] = [
            (Initializing, &[Idle, Error, Closed]),
            (Idle, &[Running, Error, Closed, Initializing]),
            (Running, &[Idle, Error, Closed]),
            (Error, &[Running, Closed, Initializing]),
            (Closed, &[Initializing, Error]),
        ];
        for (from, tos) in allowed {
            for to in Status::ALL {
                let want = from == to || tos.contains(&to);
                assert_eq!(from.can_go(to), want, "{from:?} → {to:?}");
                assert_eq!(from.go(to).is_ok(), want, "{from:?} → {to:?}");
            }
        }
        // What SPEC 2 rules out in words.
        assert!(!Closed.can_go(Running), "a closed agent resumes first");
        assert!(!Closed.can_go(Idle));
        assert!(
            !Initializing.can_go(Running),
            "a turn waits for the session"
        );
        assert!(
            !Error.can_go(Idle),
            "error ends only by a new turn or a close"
        );
        assert!(
            !Running.can_go(Initializing),
            "a running turn ends before a new session"
        );
        assert_eq!(
            Closed.go(Running),
            Err(Transition {
                from: Closed,
                to: Running
            })
        );
    }
}
