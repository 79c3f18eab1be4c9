//! Who works in a checkout, and the checkouts held while the user's Changes actions (discard,
//! merge) run git in them (SPEC 15: "Discard and merge stop the agents working in that checkout
//! first, and never touch another agent's checkout"); holding one is [`super::hold`].
//!
//! An agent works in a checkout when its cwd is inside the checkout's work tree (lexically:
//! recorded cwds are canonical, and so is the top git reports).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::{Engine, SessionState};
use crate::model::AgentId;

/// An agent working in a checkout, as the Changes view shows it before an action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutAgent {
    pub agent_id: AgentId,
    pub title: String,
    /// What a person calls it: its title, else its provider and the start of its id.
    pub name: String,
    /// A turn runs or starts: what it writes there is in flux (a merge there waits for it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub working: bool,
}

/// The actor's holds: checkouts no agent may start a process in, and the starts that wait.
#[derive(Default)]
pub(super) struct Holds {
    next: u64,
    held: Vec<(u64, Vec<PathBuf>)>,
    deferred: Vec<(AgentId, Option<String>)>,
}

impl Holds {
    pub(super) fn covers(&self, cwd: &str) -> bool {
        self.held
            .iter()
            .any(|(_, dirs)| dirs.iter().any(|d| Path::new(cwd).starts_with(d)))
    }

    /// Holds `dirs` until [`Self::release`] with the token answered.
    pub(super) fn hold(&mut self, dirs: Vec<PathBuf>) -> u64 {
        self.next += 1;
        let token = self.next;
        self.held.push((token, dirs));
        token
    }

    /// Keeps `agent`'s start (what it resumes) for the release.
    pub(super) fn defer(&mut self, agent: AgentId, resume: &Option<String>) {
        match self.deferred.iter_mut().find(|(a, _)| *a == agent) {
            Some(d) => d.1 = resume.clone(),
            None => self.deferred.push((agent, resume.clone())),
        }
    }

    /// Releases the hold of `token`; answers every start that waited (for any hold).
    pub(super) fn release(&mut self, token: u64) -> Vec<(AgentId, Option<String>)> {
        self.held.retain(|(t, _)| *t != token);
        std::mem::take(&mut self.deferred)
    }
}

/// A checkout to hold: the agents in `stop` are stopped; a live agent in `guard` refuses the
/// whole hold (another agent's checkout is never touched).
pub(crate) struct HoldRequest {
    pub stop: Vec<PathBuf>,
    /// The checkout a merge would write into, with the branch checked out there.
    pub guard: Option<(PathBuf, String)>,
}

/// Agents not archived with a process (starting, idle or running) whose cwd is in `dir`.
pub(super) fn agents_in(engine: &Engine, dir: &Path) -> Vec<CheckoutAgent> {
    let mut found: Vec<CheckoutAgent> = engine
        .agents()
        .filter(|a| !a.record.is_archived() && a.session != SessionState::None)
        .filter(|a| Path::new(a.record.cwd.as_str()).starts_with(dir))
        .map(|a| CheckoutAgent {
            agent_id: a.record.id,
            title: a.record.title.clone(),
            name: crate::model::display_name(&a.record.title, &a.record.provider, a.record.id),
            working: a.record.last_status.is_active(),
        })
        .collect();
    found.sort_by_key(|a| a.agent_id);
    found
}
