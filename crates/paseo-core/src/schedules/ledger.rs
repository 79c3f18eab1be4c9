//! `$PASEO_HOME/schedules.json`: what each schedule did (SPEC 20), so that each due time starts
//! exactly one run across crashes. A fire is written here (`pending`, fsynced) before its run is
//! created; its run carries the labels `schedule: <name>` and `scheduleDue: <due>`; once the run
//! exists the fire is closed (`lastDue`, `last`). A crash between the two leaves `pending`: the
//! next start looks for the run by its labels and creates it only if there is none.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::schedule::{Fire, Seen};
pub use crate::model::schedule::{Outcome, OutcomeKind};
use crate::store::{atomic, quarantine, Layout};

/// The ledger's file in a data root.
pub fn path(layout: &Layout) -> PathBuf {
    layout.schedules_path()
}

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    #[serde(default)]
    pub schedules: BTreeMap<String, Entry>,
}

/// One schedule's history, by its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// When this schedule was first seen: no due time before it is owed, and `every` counts
    /// from it.
    pub first_seen: DateTime<Utc>,
    /// The last due time dealt with (run, passed or failed to start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_due: Option<DateTime<Utc>>,
    /// A fire recorded whose run may not exist yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// What the last due time dealt with gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Outcome>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub due: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
}

impl Entry {
    pub fn new(first_seen: DateTime<Utc>) -> Entry {
        Entry {
            first_seen,
            last_due: None,
            pending: None,
            last: None,
        }
    }

    /// What the schedule rule ([`crate::model::schedule::decide`]) needs.
    pub fn seen(&self) -> Seen {
        Seen {
            first_seen: Some(self.first_seen),
            last_due: self.last_due,
            pending: self.pending.map(|p| Fire {
                due: p.due,
                late: p.late,
            }),
        }
    }

    /// The fire `f` recorded, its run not yet known to exist.
    pub fn fire(&mut self, f: Fire) {
        self.pending = Some(Pending {
            due: f.due,
            late: f.late,
        });
    }

    /// The due time dealt with: `outcome` closes it (and any fire recorded for it).
    pub fn close(&mut self, outcome: Outcome) {
        self.pending = None;
        self.last_due = Some(self.last_due.map_or(outcome.due, |d| d.max(outcome.due)));
        self.last = Some(outcome);
    }
}

impl Ledger {
    /// Reads the ledger of `layout`. A missing file is an empty ledger; one that cannot be read
    /// is set aside in `quarantine/` (said in the log) and the schedules start afresh, owing
    /// nothing before now: never a run twice.
    pub fn load(layout: &Layout) -> Ledger {
        let p = path(layout);
        let bytes = match std::fs::read(&p) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ledger::default(),
            Err(error) => {
                tracing::error!(path = %p.display(), %error, "cannot read the schedules' ledger");
                return Ledger::default();
            }
        };
        match serde_json::from_slice(&bytes) {
            Ok(l) => l,
            Err(error) => {
                let why = format!("schedules.json: {error}");
                let aside = quarantine::set_aside(layout, &p, &why, false)
                    .map_or_else(|m| m, |q| format!("set aside in {}", q.to));
                tracing::error!(%why, %aside, "the schedules' ledger was damaged");
                Ledger::default()
            }
        }
    }

    /// Writes the ledger durably (atomic, fsynced): what is written here is what a restart
    /// finds.
    pub fn save(&self, layout: &Layout) -> std::io::Result<()> {
        let mut text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        text.push(b'\n');
        atomic::ensure_dir(&layout.home)?;
        atomic::write_atomic(&path(layout), &text)
    }
}
