//! What an operation changed and what must happen next, including the order a finish notice's
//! writes need to land in (SPEC 4: exactly once at any crash instant).

use super::Effect;
use crate::model::{AgentId, WorkspaceId};
use rustc_hash::FxHashSet;

/// What an operation changed and what must happen next.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Agents whose record or live state changed: persist and re-render.
    pub agents: FxHashSet<AgentId>,
    /// Agents whose inbox changed: persist it.
    pub inboxes: FxHashSet<AgentId>,
    /// Workspaces whose bucket or record changed.
    pub workspaces: FxHashSet<WorkspaceId>,
    pub workspaces_registry: bool,
    pub projects_registry: bool,
    /// Parents whose track (membership or a member's state) changed.
    pub tracks: FxHashSet<AgentId>,
    pub effects: Vec<Effect>,
    /// Human-readable problems found (load repairs, refused notices): log and show in the UI.
    pub notices: Vec<String>,
    /// The notice ledger: which write must be durable before which, for every notice that
    /// changed hands in these operations.
    pub notice_order: Vec<NoticeOrder>,
}

/// One step of a finish notice's life and the write order it needs. A notice lives in exactly
/// one durable place at a time: the child's record (its arm), the parent's inbox, or the
/// parent's timeline (received). Each hand-over writes the new place before the old one
/// forgets it, so a crash between the two leaves it in both (recognised by its id at load,
/// SPEC 4) and never in neither.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoticeOrder {
    /// `child`'s record stopped owing a notice now queued in `target`'s inbox: the child's
    /// record may land only after that inbox write.
    Queued { child: AgentId, target: AgentId },
    /// `child`'s record stopped owing a notice recorded as `target`'s timeline item (a target
    /// that cannot read prompts): the child's record may land only after that item.
    Recorded { child: AgentId, target: AgentId },
    /// `target` received a notice from its inbox as its turn: the timeline item showing it
    /// lands before the inbox without it.
    Delivered { target: AgentId },
}

impl Outcome {
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
            && self.inboxes.is_empty()
            && self.workspaces.is_empty()
            && !self.workspaces_registry
            && !self.projects_registry
            && self.tracks.is_empty()
            && self.effects.is_empty()
            && self.notices.is_empty()
            && self.notice_order.is_empty()
    }
}
