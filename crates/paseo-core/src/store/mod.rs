//! The on-disk format: agent records, the workspace and project registries, notice inboxes and
//! timelines under the data root, loaded at start with quarantine of what cannot be read, and
//! written atomically and durably (see [`atomic`] and [`writer`]).

pub mod atomic;
#[cfg(test)]
pub(crate) mod fault;
mod load;
pub mod paths;
pub mod private;
pub mod quarantine;
pub mod records_cache;
pub mod timeline;
pub mod writer;

use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::{AgentId, AgentRecord, Notice, ProjectRecord, WorkspaceRecord};

pub use load::{load_agents, load_agents_at_rest, LoadedAgents, LoadedRecord};
pub use paths::{cwd_with_dashes, Layout};
pub use quarantine::{quarantine, Quarantined};
pub use writer::{Gate, Mark, Ticket, WriteError, Writer};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot encode {what}: {message}")]
    Encode { what: String, message: String },
    /// A record file read back for what was left in it (a system prompt) is not as written.
    #[error("cannot read back {path}: {message}")]
    ReadBack { path: String, message: String },
    /// A loading thread died: the records it held are not known, so nothing is loaded rather
    /// than a fleet with agents missing.
    #[error("a thread loading the agent records failed: {0}")]
    LoadThread(String),
    /// The folder a new agent's record goes in cannot take a file (SPEC 15).
    #[error("cannot write the agent's record in {path}: {source}")]
    Unwritable {
        path: String,
        #[source]
        source: io::Error,
    },
}

/// A write the store could not do, for the runtime to show and act on (SPEC 15): the agent it
/// concerns (if any) goes `error` with the message. Sent when a file starts failing, not on
/// every retry, so a full disk cannot flood the channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreFailure {
    pub agent: Option<AgentId>,
    pub message: String,
}

/// Where the writer and the timelines report failures.
pub type FailureSender = tokio::sync::mpsc::UnboundedSender<StoreFailure>;

/// What a registry file held: its entries, its other top-level keys (kept, and written back,
/// like a record's unknown fields), what was set aside and the problems.
type LoadedList<T> = (Vec<T>, Map<String, Value>, Vec<Quarantined>, Vec<String>);

/// A registry file: `{"<key>": [entries], ...}` (a bare array is accepted on read).
fn load_list<T: for<'de> Deserialize<'de>>(
    layout: &Layout,
    path: &Path,
    key: &str,
) -> LoadedList<T> {
    let mut q = Vec::new();
    let mut problems = Vec::new();
    let mut extra = Map::new();
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return (Vec::new(), extra, q, problems),
        Err(e) => {
            // Moved aside, so the registry the app writes next cannot replace it unseen.
            match quarantine::set_aside(layout, path, &format!("unreadable: {e}"), false) {
                Ok(x) => q.push(x),
                Err(m) => problems.push(m),
            }
            return (Vec::new(), extra, q, problems);
        }
    };
    let items = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Array(a)) => Ok(a),
        Ok(Value::Object(mut o)) => {
            let list = o.remove(key);
            extra = o;
            match list {
                Some(Value::Array(a)) => Ok(a),
                _ => Err(format!("expected an object with a \"{key}\" array")),
            }
        }
        Ok(_) => Err(format!("expected an object with a \"{key}\" array")),
        Err(e) => Err(format!("invalid JSON: {e}")),
    };
    let mut out = Vec::new();
    let mut bad = Vec::new();
    match items {
        Ok(items) => {
            for (i, item) in items.into_iter().enumerate() {
                match serde_json::from_value::<T>(item) {
                    Ok(v) => out.push(v),
                    Err(e) => bad.push(format!("{key}[{i}]: {e}")),
                }
            }
        }
        Err(e) => bad.push(e),
    }
    if !bad.is_empty() {
        match quarantine::set_aside(layout, path, &bad.join("; "), true) {
            Ok(x) => q.push(x),
            Err(m) => problems.push(m),
        }
    }
    (out, extra, q, problems)
}

/// The workspace and project registries.
#[derive(Debug, Default)]
pub struct LoadedRegistry {
    pub workspaces: Vec<WorkspaceRecord>,
    pub projects: Vec<ProjectRecord>,
    /// The files' other top-level keys (written by a newer or another version), written back.
    pub extra: RegistryExtra,
    pub quarantined: Vec<Quarantined>,
    pub problems: Vec<String>,
}

/// Top-level keys of `workspaces.json` and `projects.json` this version does not know.
#[derive(Clone, Debug, Default)]
pub struct RegistryExtra {
    pub workspaces: Map<String, Value>,
    pub projects: Map<String, Value>,
}

pub fn load_registry(layout: &Layout) -> LoadedRegistry {
    let (workspaces, wx, mut q1, mut p1) =
        load_list(layout, &layout.workspaces_path(), "workspaces");
    let (projects, px, q2, p2) = load_list(layout, &layout.projects_path(), "projects");
    q1.extend(q2);
    p1.extend(p2);
    LoadedRegistry {
        workspaces,
        projects,
        extra: RegistryExtra {
            workspaces: wx,
            projects: px,
        },
        quarantined: q1,
        problems: p1,
    }
}

pub fn encode_workspaces<'a>(
    ws: impl Iterator<Item = &'a WorkspaceRecord>,
) -> Result<Vec<u8>, StoreError> {
    encode_workspaces_keeping(ws, &Map::new())
}

/// `workspaces.json` with the top-level keys it was read with and this version does not know.
pub fn encode_workspaces_keeping<'a>(
    ws: impl Iterator<Item = &'a WorkspaceRecord>,
    extra: &Map<String, Value>,
) -> Result<Vec<u8>, StoreError> {
    encode_list(ws, "workspaces", extra)
}

pub fn encode_projects<'a>(
    ps: impl Iterator<Item = &'a ProjectRecord>,
) -> Result<Vec<u8>, StoreError> {
    encode_projects_keeping(ps, &Map::new())
}

/// `projects.json` with the top-level keys it was read with and this version does not know.
pub fn encode_projects_keeping<'a>(
    ps: impl Iterator<Item = &'a ProjectRecord>,
    extra: &Map<String, Value>,
) -> Result<Vec<u8>, StoreError> {
    encode_list(ps, "projects", extra)
}

fn encode_list<'a, T: Serialize + 'a>(
    items: impl Iterator<Item = &'a T>,
    key: &str,
    extra: &Map<String, Value>,
) -> Result<Vec<u8>, StoreError> {
    let list: Vec<&T> = items.collect();
    let what = format!("{key}.json");
    let entries = serde_json::to_value(list).map_err(|e| StoreError::Encode {
        what: what.clone(),
        message: e.to_string(),
    })?;
    let mut o = extra.clone();
    o.insert(key.to_string(), entries);
    encode(&Value::Object(o), &what)
}

/// A record's file text. Refuses a record with parts still in its file (loaded at rest: its
/// system prompt, its last message): written as it is, they would be lost — [`encode_record_at`]
/// reads them back first.
pub fn encode_record(rec: &AgentRecord) -> Result<Vec<u8>, StoreError> {
    if rec.has_parts_on_disk() {
        return Err(StoreError::Encode {
            what: "agent record".into(),
            message: format!(
                "agent {}'s system prompt or last message is still in its record file (read \
                 it back first)",
                rec.id
            ),
        });
    }
    encode(rec, "agent record")
}

/// [`encode_record`] of the record whose file is `path`, the parts left in that file read back
/// first.
pub fn encode_record_at(rec: &AgentRecord, path: &Path) -> Result<Vec<u8>, StoreError> {
    if !rec.has_parts_on_disk() {
        return encode_record(rec);
    }
    let mut whole = rec.clone();
    read_back(&mut whole, path)?;
    encode_record(&whole)
}

/// Fills in the parts of `rec` left in its record file `path` (loaded at rest). The file must
/// still be that agent's record and read whole: anything else is an error, never a guess.
pub fn read_back(rec: &mut AgentRecord, path: &Path) -> Result<(), StoreError> {
    if !rec.has_parts_on_disk() {
        return Ok(());
    }
    let bytes = fs::read(path).map_err(|source| StoreError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let back = |message: String| StoreError::ReadBack {
        path: path.display().to_string(),
        message,
    };
    let mut whole = AgentRecord::from_json_boxed(&bytes).map_err(|e| {
        back(format!(
            "its system prompt or last message could not be read back: {e}"
        ))
    })?;
    if whole.id != rec.id {
        return Err(back(format!(
            "it holds agent {}'s record, not agent {}'s",
            whole.id, rec.id
        )));
    }
    rec.take_parts_on_disk(&mut whole);
    Ok(())
}

fn encode<T: Serialize + ?Sized>(v: &T, what: &str) -> Result<Vec<u8>, StoreError> {
    let mut b = serde_json::to_vec_pretty(v).map_err(|e| StoreError::Encode {
        what: what.to_string(),
        message: e.to_string(),
    })?;
    b.push(b'\n');
    Ok(b)
}

#[derive(Serialize, Deserialize)]
struct InboxFile {
    notices: Vec<Notice>,
}

pub fn encode_inbox(notices: &[Notice]) -> Result<Vec<u8>, StoreError> {
    encode(
        &InboxFile {
            notices: notices.to_vec(),
        },
        "inbox",
    )
}

/// Loads every `inbox/{id}.json`; damaged ones are quarantined.
pub fn load_inboxes(layout: &Layout) -> (Vec<(AgentId, Vec<Notice>)>, Vec<Quarantined>) {
    let mut out = Vec::new();
    let mut q = Vec::new();
    let Ok(rd) = fs::read_dir(layout.inbox_dir()) else {
        return (out, q);
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(atomic::TEMP_PREFIX) {
            let _ = fs::remove_file(&p);
            continue;
        }
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let parsed = stem
            .parse::<AgentId>()
            .map_err(|e| e.to_string())
            .and_then(|id| {
                fs::read(&p)
                    .map_err(|e| e.to_string())
                    .and_then(|b| {
                        serde_json::from_slice::<InboxFile>(&b).map_err(|e| e.to_string())
                    })
                    .map(|f| (id, f.notices))
            });
        match parsed {
            Ok(x) => out.push(x),
            Err(reason) => {
                if let Ok(x) = quarantine(layout, &p, &format!("invalid inbox: {reason}")) {
                    q.push(x);
                }
            }
        }
    }
    (out, q)
}

/// Loaded inboxes: each agent's notices.
pub type Inboxes = Vec<(AgentId, Vec<Notice>)>;

/// Sets aside the inboxes of agents whose record was not loaded (quarantined, or missing), so
/// restoring the record together with its inbox brings its notices back; returns the others.
pub fn set_aside_orphan_inboxes(
    layout: &Layout,
    inboxes: Inboxes,
    loaded: &std::collections::HashSet<AgentId>,
) -> (Inboxes, Vec<Quarantined>, Vec<String>) {
    let mut kept = Vec::with_capacity(inboxes.len());
    let mut aside = Vec::new();
    let mut problems = Vec::new();
    for (id, notices) in inboxes {
        if loaded.contains(&id) {
            kept.push((id, notices));
            continue;
        }
        let path = layout.inbox_path(id);
        let reason = format!("the record of agent {id} was not loaded");
        match quarantine(layout, &path, &reason) {
            Ok(q) => aside.push(q),
            // Left where it is: the engine keeps unknown agents' inboxes out of memory, and
            // nothing rewrites a file it does not know.
            Err(e) => problems.push(format!(
                "the notice inbox of agent {id} ({}) could not be set aside: {e}",
                path.display()
            )),
        }
    }
    (kept, aside, problems)
}

#[cfg(test)]
pub(crate) mod tests;
