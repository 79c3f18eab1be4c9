//! Each agent's timeline: numbered items, an in-memory tail, batched events, and pages served
//! from the tail or read from disk.

use std::collections::{HashMap, VecDeque};

use super::broadcast::Broadcast;
use super::events::Event;
use super::RuntimeError;
use crate::model::{AgentId, NewItem, TimelineItem, Timestamp};
use crate::store::timeline::{PageReply, Timelines};
use crate::store::Mark;

/// In-memory timeline tail per agent: at most this many items…
const TAIL_ITEMS: usize = 2_000;
/// …and at most this many bytes of text.
const TAIL_BYTES: usize = 4 << 20;

#[derive(Default)]
struct Tl {
    next_seq: u64,
    tail: VecDeque<TimelineItem>,
    tail_bytes: usize,
    pending: Vec<TimelineItem>,
    /// Set once `pending` is on disk: a write held behind it may land (SPEC 4).
    mark: Option<Mark>,
}

/// A timeline page: served from memory, or on its way from disk.
pub(crate) enum Page {
    Ready(Vec<TimelineItem>),
    Disk(PageReply),
}

/// The timelines of every agent: the store's files and the tails kept in memory.
pub(super) struct Tails {
    timelines: Timelines,
    tl: HashMap<AgentId, Tl>,
}

impl Tails {
    pub(super) fn new(timelines: Timelines) -> Tails {
        Tails {
            timelines,
            tl: HashMap::new(),
        }
    }

    fn tl_state(&mut self, agent: AgentId) -> &mut Tl {
        let timelines = &self.timelines;
        self.tl.entry(agent).or_insert_with(|| Tl {
            next_seq: timelines.recover(agent) + 1,
            ..Default::default()
        })
    }

    /// Numbers `item` as the next of `agent`'s timeline (in turn `turn`); it goes out with the
    /// next [`Self::flush`].
    pub(super) fn push(&mut self, agent: AgentId, turn: u64, item: NewItem) {
        let now = Timestamp::now();
        let tl = self.tl_state(agent);
        let it = item.numbered(tl.next_seq, turn, now);
        tl.next_seq += 1;
        tl.tail_bytes += it.text.len();
        tl.tail.push_back(it.clone());
        while tl.tail.len() > TAIL_ITEMS || (tl.tail_bytes > TAIL_BYTES && tl.tail.len() > 1) {
            if let Some(old) = tl.tail.pop_front() {
                tl.tail_bytes -= old.text.len();
            }
        }
        tl.pending.push(it);
    }

    /// A mark set once what `agent`'s timeline has waiting now is on disk.
    pub(super) fn mark(&mut self, agent: AgentId) -> Mark {
        self.tl_state(agent)
            .mark
            .get_or_insert_with(Mark::new)
            .clone()
    }

    /// Hands what every timeline has waiting to the store and tells the windows.
    pub(super) fn flush(&mut self, out: &Broadcast) {
        for (agent, tl) in self.tl.iter_mut() {
            if tl.pending.is_empty() {
                if let Some(m) = tl.mark.take() {
                    // What it covers was handed over already: set once that is written.
                    self.timelines.append_marked(*agent, &[], Some(m));
                }
                continue;
            }
            let items = std::mem::take(&mut tl.pending);
            self.timelines.append_marked(*agent, &items, tl.mark.take());
            out.send(Event::TimelineItems {
                agent_id: *agent,
                items,
            });
        }
    }

    /// Fires once everything handed to the store so far is written.
    pub(super) fn written_rx(&self) -> tokio::sync::oneshot::Receiver<()> {
        self.timelines.flush_rx()
    }

    /// Waits until everything handed to the store is written.
    pub(super) async fn written(&self) {
        self.timelines.flush().await;
    }

    /// How many timelines cannot be written right now.
    pub(super) fn failing(&self) -> usize {
        self.timelines.failing()
    }

    /// Items `before` (0: the end), at most `limit`, after a [`Self::flush`].
    pub(super) fn page(
        &mut self,
        agent: AgentId,
        before: u64,
        limit: usize,
    ) -> Result<Page, RuntimeError> {
        let tl = self.tl_state(agent);
        let end = if before == 0 {
            tl.next_seq
        } else {
            before.min(tl.next_seq)
        };
        let start = end.saturating_sub(limit as u64).max(1);
        let first = tl.tail.front().map(|i| i.seq).unwrap_or(tl.next_seq);
        if start >= first {
            let items = tl
                .tail
                .iter()
                .filter(|i| i.seq >= start && i.seq < end)
                .cloned()
                .collect();
            return Ok(Page::Ready(items));
        }
        Ok(Page::Disk(self.timelines.page_rx(agent, end, limit)?))
    }
}
