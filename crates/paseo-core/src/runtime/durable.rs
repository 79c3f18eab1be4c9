//! What a change's caller waits for before it reports the change done: its durable writes,
//! the archives it announces and the process trees it stopped.

use std::time::Duration;

use tokio::sync::watch;

use super::RuntimeError;
use crate::model::AgentId;
use crate::store::{Ticket, Writer};

/// How long a closing process tree may take before archive stops waiting for it.
pub(super) const CLOSE_WAIT: Duration = Duration::from_secs(15);

/// What a caller waits for before reporting a change done: durable writes, archives announced
/// (their events go out only once their records are durable) and dead processes.
pub(crate) struct Durable {
    tickets: Vec<Ticket>,
    announced: Vec<watch::Receiver<bool>>,
    closes: Vec<(AgentId, watch::Receiver<bool>)>,
    close_wait: Duration,
}

impl Durable {
    pub(crate) async fn wait(mut self, writer: &Writer) -> Result<(), RuntimeError> {
        writer.wait_all(&self.tickets).await?;
        for rx in self.announced.iter_mut() {
            if rx.wait_for(|done| *done).await.is_err() {
                return Err(RuntimeError::Stopped);
            }
        }
        let deadline = tokio::time::Instant::now() + self.close_wait;
        let mut alive = Vec::new();
        for (id, rx) in self.closes.iter_mut() {
            if tokio::time::timeout_at(deadline, rx.wait_for(|done| *done))
                .await
                .is_err()
            {
                alive.push(id.to_string());
            }
        }
        if !alive.is_empty() {
            // The record says archived/closed, but a process tree may still run: the caller
            // must not report the change done as if nothing were left behind.
            return Err(RuntimeError::CloseTimeout(format!(
                "the processes of {} did not exit within {} s of being stopped; they may still \
                 be running",
                alive.join(", "),
                self.close_wait.as_secs()
            )));
        }
        Ok(())
    }
}

impl Durable {
    pub(super) fn new(
        tickets: Vec<Ticket>,
        announced: Vec<watch::Receiver<bool>>,
        closes: Vec<(AgentId, watch::Receiver<bool>)>,
    ) -> Durable {
        Durable {
            tickets,
            announced,
            closes,
            close_wait: CLOSE_WAIT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process tree that outlives the close wait is an error the caller sees, not Ok.
    #[tokio::test]
    async fn a_close_that_times_out_is_an_error() {
        let writer = Writer::new(1);
        let (_tx, rx) = watch::channel(false);
        let id = AgentId::new();
        let d = Durable {
            tickets: Vec::new(),
            announced: Vec::new(),
            closes: vec![(id, rx)],
            close_wait: Duration::from_millis(50),
        };
        let e = d
            .wait(&writer)
            .await
            .expect_err("a timed-out close is an error");
        assert_eq!(e.code(), "timeout");
        assert!(e.to_string().contains(&id.to_string()), "{e}");
        assert!(e.to_string().contains("did not exit"), "{e}");

        let (tx, rx) = watch::channel(false);
        let _ = tx.send(true);
        let d = Durable {
            tickets: Vec::new(),
            announced: Vec::new(),
            closes: vec![(id, rx)],
            close_wait: Duration::from_millis(50),
        };
        d.wait(&writer).await.expect("a close that ended is fine");
        writer.shutdown();
    }
}
