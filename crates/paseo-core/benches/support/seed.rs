//! Realistic data roots for benchmarks and measurements: `n` agent records in trees (every fifth
//! a root, the others subagents of a recent agent) over 20 directory workspaces, each with a
//! model and a 600-character system prompt like real ones (≈ 1.4 KB on disk), created a second
//! apart. Shared by the listing, launch and scroll benches and the `seed_records` example.
//! [`seed_archived`] also archives part of the trees, each its own archive gesture (a fleet used
//! for months).

use paseo_core::engine::{Engine, NewAgent};
use paseo_core::model::{AgentId, ProjectId, Timestamp, WorkspaceKind, WorkspaceRecord};
use paseo_core::store::{self, atomic, Layout};
use std::path::{Path, PathBuf};

/// Writes the records and workspaces.json under `home`; returns the record files' paths.
#[allow(dead_code)]
pub fn seed(home: &Path, n: usize) -> Vec<PathBuf> {
    seed_archived(home, n, 0)
}

#[allow(dead_code)]
/// [`seed`], then every `every`-th root agent (oldest first; none for 0) archived with its
/// subagents, one archive batch per root: `n / 5 / every` batches.
pub fn seed_archived(home: &Path, n: usize, every: usize) -> Vec<PathBuf> {
    seed_tagged(home, n, every, "seed")
}

/// [`seed`] with what a fleet used for months carries: long titles, deep folders and two labels
/// an agent set (a team, a ticket), so a listing's size is measured on realistic text.
#[allow(dead_code)]
pub fn seed_long(home: &Path, n: usize) -> Vec<PathBuf> {
    seed_with(home, n, 0, "seed", true)
}

/// [`seed_archived`] with workspace and project ids starting `tag` (`seed` there): machines
/// seeded apart (a window's hosts) hold distinct ids, as real ones (random) do.
pub fn seed_tagged(home: &Path, n: usize, every: usize, tag: &str) -> Vec<PathBuf> {
    seed_with(home, n, every, tag, false)
}

fn seed_with(home: &Path, n: usize, every: usize, tag: &str, long: bool) -> Vec<PathBuf> {
    let folder = |w: usize| {
        if long {
            format!("/home/alex.morgan/src/github.com/acme-corp/platform-services/project-{w}")
        } else {
            format!("/tmp/seed/project-{w}")
        }
    };
    let layout = Layout::new(home);
    let mut e = Engine::new();
    let workspaces: Vec<WorkspaceRecord> = (0..20)
        .map(|i| WorkspaceRecord {
            workspace_id: format!("{tag}-ws-{i}").parse().unwrap(),
            project_id: format!("{tag}-project").parse::<ProjectId>().unwrap(),
            cwd: folder(i),
            kind: WorkspaceKind::Directory,
            display_name: format!("project-{i}"),
            name: None,
            created_at: Timestamp::now(),
            updated_at: Timestamp::now(),
            archived_at: None,
            repo: None,
            branch: None,
            created_by_agent_id: None,
            created_by_request: None,
            extra: Default::default(),
        })
        .collect();
    for w in &workspaces {
        e.upsert_workspace(w.clone(), None);
    }
    let mut parents: Vec<AgentId> = Vec::with_capacity(n);
    // A second apart, as a fleet grows over days: no two agents share a timestamp, so nothing
    // downstream (a window's copy of the fleet) gets to share their text.
    let start = Timestamp::now().millis() - n as i64 * 1000;
    for i in 0..n {
        e.set_clock(Some(Timestamp::from_millis(start + i as i64 * 1000)));
        let parent = (i % 5 != 0).then(|| parents[parents.len().saturating_sub(1 + i % 3)]);
        let w = i % 20;
        let title = if long {
            format!("agent {i}: review the login form's validation and the session refresh flow")
        } else {
            format!("agent {i}: review the login form")
        };
        let mut new = NewAgent {
            title,
            parent,
            created_by: parent,
            ..NewAgent::new(
                "shell",
                false,
                folder(w),
                workspaces[w].workspace_id.clone(),
            )
        };
        if long {
            new.labels
                .insert("team".into(), "platform-infrastructure".into());
            new.labels
                .insert("ticket".into(), format!("PLAT-{}", 10_000 + i));
        }
        new.config.model = Some("claude-sonnet-4-5".into());
        new.config.system_prompt = Some("You review code for the team. ".repeat(20));
        let id = e.create(new).unwrap();
        e.close(id).unwrap();
        parents.push(id);
    }
    if every > 0 {
        for root in parents.iter().step_by(5).step_by(every) {
            e.archive(*root).unwrap();
        }
    }
    let mut paths = Vec::with_capacity(n);
    for a in e.agents() {
        let p = layout.record_path(&a.record.cwd, a.record.id);
        atomic::ensure_dir(p.parent().unwrap()).unwrap();
        std::fs::write(&p, store::encode_record(&a.record).unwrap()).unwrap();
        paths.push(p);
    }
    atomic::write_atomic(
        &layout.workspaces_path(),
        &store::encode_workspaces(e.workspaces()).unwrap(),
    )
    .unwrap();
    paths
}

/// What a killed app leaves: `lastStatus` "running" in every record whose index is not a
/// multiple of `keep_every` (3 → two thirds), as if their turns were cut off. The next start
/// must normalize (and rewrite) each of them.
#[allow(dead_code)]
pub fn crash(paths: &[PathBuf], keep_every: usize) -> usize {
    let mut crashed = 0;
    for (i, p) in paths.iter().enumerate() {
        if i % keep_every == 0 {
            continue;
        }
        let mut record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        record["lastStatus"] = "running".into();
        std::fs::write(p, serde_json::to_vec_pretty(&record).unwrap()).unwrap();
        crashed += 1;
    }
    crashed
}
