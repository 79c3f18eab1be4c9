//! No orphans after a crash (SPEC 11): every agent process group is recorded in the data root
//! (`run/{agentId}.{pgid}.json`) while it runs, so the next start can stop what a killed app
//! (SIGKILL, power loss) left running. A recorded group is stopped only when it still really
//! is that agent's: one of its live members carries the agent's `PASEO_AGENT_ID`, or its leader
//! is the very process recorded (same pid and start time); a recycled pgid is left alone.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::pgroup::{self, TERM_GRACE};
use crate::model::AgentId;
use crate::store::atomic;

/// Where a data root's live process groups are recorded.
#[derive(Clone, Debug)]
pub struct GroupRecorder {
    dir: PathBuf,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupFile {
    agent_id: AgentId,
    pgid: i32,
    /// The leader's start time since boot, in clock ticks (`/proc/<pid>/stat`).
    leader_start: Option<u64>,
}

impl GroupRecorder {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        GroupRecorder { dir: dir.into() }
    }

    fn path(&self, agent: AgentId, pgid: i32) -> PathBuf {
        self.dir.join(format!("{agent}.{pgid}.json"))
    }

    /// Records a group just spawned (durably: a crash a moment later must still find it). A
    /// failure is logged, not fatal: the agent runs, only crash cleanup misses it.
    pub fn record(&self, agent: AgentId, pgid: i32) {
        let file = GroupFile {
            agent_id: agent,
            pgid,
            leader_start: pgroup::start_time(pgid),
        };
        let r = atomic::ensure_dir(&self.dir).and_then(|_| {
            let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
            atomic::write_atomic(&self.path(agent, pgid), &bytes)
        });
        if let Err(e) = r {
            tracing::warn!(%agent, pgid, error = %e, "cannot record the agent's process group");
        }
    }

    /// The group is gone: forget it.
    pub fn forget(&self, agent: AgentId, pgid: i32) {
        let p = self.path(agent, pgid);
        if let Err(e) = std::fs::remove_file(&p) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %p.display(), error = %e, "cannot forget a process group");
            }
        }
    }

    /// Stops every recorded group still alive that is really its agent's (SIGTERM, grace,
    /// SIGKILL), forgets every record, and returns how many groups were stopped.
    pub async fn stop_leftovers(&self) -> usize {
        let dir = self.dir.clone();
        let found = tokio::task::spawn_blocking(move || leftovers(&dir))
            .await
            .unwrap_or_default();
        let n = found.len();
        let stops = found.into_iter().map(|(agent, pgid)| async move {
            tracing::warn!(%agent, pgid, "stopping a process group left running by the last run");
            pgroup::terminate_group(pgid, TERM_GRACE, None).await;
        });
        futures::future::join_all(stops).await;
        n
    }
}

/// Reads and removes every record; returns the groups to stop.
fn leftovers(dir: &Path) -> Vec<(AgentId, i32)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        let parsed = std::fs::read(&p)
            .ok()
            .and_then(|b| serde_json::from_slice::<GroupFile>(&b).ok());
        if let Some(f) = parsed {
            if f.pgid > 1 && belongs(&f) {
                out.push((f.agent_id, f.pgid));
            }
        }
        let _ = std::fs::remove_file(&p);
    }
    out
}

fn belongs(f: &GroupFile) -> bool {
    let members = pgroup::group_members(f.pgid);
    if members.is_empty() {
        return false;
    }
    let leader_same = f.leader_start.is_some()
        && members.contains(&f.pgid)
        && pgroup::start_time(f.pgid) == f.leader_start;
    let needle = format!("PASEO_AGENT_ID={}", f.agent_id);
    leader_same
        || members.iter().any(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
        })
}
