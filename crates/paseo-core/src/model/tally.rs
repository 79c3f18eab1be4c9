//! How many agents say each status word, and the one line that says them: the track header
//! (SPEC 7), the workspace row and home (SPEC 6) and the status bar show this value as the core
//! words it; none spells its own.
//! Counted by bucket ([`super::status::bucket`]), so each count is exactly the rows whose word
//! it repeats: "needs you" counts the rows that say "needs you" (a pending permission or a held
//! start) and "failed" the rows that say "failed". A count changes only when an agent's state
//! does: opening a failed agent clears its attention, not its bucket.

use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::status::Bucket;

/// The agents of one view (a track, a workspace, the fleet) by the word their rows show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Running or starting (a running agent waiting for permission says "needs you" instead).
    pub running: usize,
    /// Waiting for a live slot (SPEC 14).
    pub queued: usize,
    /// Waiting for the user: a pending permission request or a held start.
    pub needs_you: usize,
    /// In the error state, seen or not.
    pub failed: usize,
    pub total: usize,
    /// For a track: how many members its "Archive finished" would archive (SPEC 5,
    /// [`super::archive_plan`]); none for a workspace or the fleet, which have no such gesture.
    pub finished: Option<usize>,
}

/// One part of the line: which rows it counts (a bucket's name, or "total") and its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub kind: &'static str,
    pub count: usize,
}

impl Part {
    pub fn text(&self) -> String {
        let n = self.count;
        match self.kind {
            "needs_input" => format!("{n} need{} you", if n == 1 { "s" } else { "" }),
            other => format!("{n} {other}"),
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut p = s.serialize_struct("Part", 3)?;
        p.serialize_field("kind", self.kind)?;
        p.serialize_field("count", &self.count)?;
        p.serialize_field("text", &self.text())?;
        p.end()
    }
}

impl Tally {
    /// Counts one agent whose row shows `bucket`.
    pub fn add(&mut self, bucket: Bucket) {
        self.add_n(bucket, 1);
    }

    /// Counts `n` agents whose rows show `bucket`.
    pub fn add_n(&mut self, bucket: Bucket, n: usize) {
        self.total += n;
        match bucket {
            Bucket::Running => self.running += n,
            Bucket::Queued => self.queued += n,
            Bucket::NeedsInput => self.needs_you += n,
            Bucket::Failed => self.failed += n,
            Bucket::Attention | Bucket::Done => {}
        }
    }

    /// The line, in this order: "2 running · 3 queued · 1 needs you · 1 failed · 12 total".
    /// Running, "needs you" and the total are always said; queued and failed only when there
    /// are any.
    pub fn parts(&self) -> Vec<Part> {
        let part = |kind, count| Part { kind, count };
        let mut parts = vec![part("running", self.running)];
        if self.queued > 0 {
            parts.push(part("queued", self.queued));
        }
        parts.push(part("needs_input", self.needs_you));
        if self.failed > 0 {
            parts.push(part("failed", self.failed));
        }
        parts.push(part("total", self.total));
        parts
    }

    /// The line as text (the tray's menu and tooltip).
    pub fn line(&self) -> String {
        let parts: Vec<String> = self.parts().iter().map(Part::text).collect();
        parts.join(" · ")
    }
}

/// The numbers, and the line's parts (`line`: `{kind, count, text}`) a window renders as they
/// are, each count a link to the agents it counts.
impl Serialize for Tally {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_struct("Tally", 7)?;
        t.serialize_field("running", &self.running)?;
        t.serialize_field("queued", &self.queued)?;
        t.serialize_field("needsYou", &self.needs_you)?;
        t.serialize_field("failed", &self.failed)?;
        t.serialize_field("total", &self.total)?;
        if let Some(finished) = self.finished {
            t.serialize_field("finished", &finished)?;
        } else {
            t.skip_field("finished")?;
        }
        t.serialize_field("line", &self.parts())?;
        t.end()
    }
}

/// Reads the numbers back; `line` is said again from them, never taken from the input.
impl<'de> Deserialize<'de> for Tally {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Numbers {
            running: usize,
            queued: usize,
            needs_you: usize,
            failed: usize,
            total: usize,
            #[serde(default)]
            finished: Option<usize>,
        }
        let n = Numbers::deserialize(d)?;
        Ok(Tally {
            running: n.running,
            queued: n.queued,
            needs_you: n.needs_you,
            failed: n.failed,
            total: n.total,
            finished: n.finished,
        })
    }
}

/// The whole fleet: its unarchived agents by the word their rows show (the status bar's and the
/// tray's line, [`FleetCounts::line`]), and how many are archived. The one counts type of the
/// app: a track or a workspace counts its rows with a [`Tally`] the same way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetCounts {
    pub tally: Tally,
    pub archived: usize,
}

impl FleetCounts {
    /// Counts one agent whose row shows `bucket`; an archived one only as archived.
    pub fn add(&mut self, bucket: Bucket, archived: bool) {
        if archived {
            self.archived += 1;
        } else {
            self.tally.add(bucket);
        }
    }

    /// Two fleets counted as one (this machine's and a connected host's, SPEC 17): every
    /// number added, so the line says them all by the same words.
    pub fn plus(self, other: FleetCounts) -> FleetCounts {
        let (a, b) = (self.tally, other.tally);
        FleetCounts {
            tally: Tally {
                running: a.running + b.running,
                queued: a.queued + b.queued,
                needs_you: a.needs_you + b.needs_you,
                failed: a.failed + b.failed,
                total: a.total + b.total,
                finished: match (a.finished, b.finished) {
                    (Some(x), Some(y)) => Some(x + y),
                    (x, y) => x.or(y),
                },
            },
            archived: self.archived + other.archived,
        }
    }

    /// The line every view of the whole fleet shows: the status bar, the tray's first menu line
    /// and its tooltip, the app's info.
    pub fn line(&self) -> String {
        self.tally.line()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_fleets_add_up_to_one_line() {
        let mut here = FleetCounts::default();
        here.add(Bucket::Running, false);
        here.add(Bucket::Done, true);
        let mut there = FleetCounts::default();
        there.add(Bucket::NeedsInput, false);
        there.add(Bucket::Running, false);
        let both = here.plus(there);
        assert_eq!(both.line(), "2 running · 1 needs you · 3 total");
        assert_eq!(both.archived, 1);
        assert_eq!(FleetCounts::default().plus(here), here);
    }

    #[test]
    fn counts_say_the_words_of_the_rows_they_count() {
        let mut t = Tally::default();
        for b in [
            Bucket::Running,
            Bucket::NeedsInput,
            Bucket::NeedsInput,
            Bucket::Failed,
            Bucket::Attention,
            Bucket::Done,
        ] {
            t.add(b);
        }
        assert_eq!(t.line(), "1 running · 2 need you · 1 failed · 6 total");
        t.add(Bucket::Queued);
        let mut one = Tally::default();
        one.add(Bucket::NeedsInput);
        assert_eq!(one.line(), "0 running · 1 needs you · 1 total");
        assert_eq!(
            t.line(),
            "1 running · 1 queued · 2 need you · 1 failed · 7 total"
        );
        // A quiet view: the window shows a quiet track's line without asking (ui/store.js).
        let quiet = Tally {
            total: 3,
            ..Tally::default()
        };
        assert_eq!(quiet.line(), "0 running · 0 need you · 3 total");
        let json = serde_json::to_value(one).unwrap();
        assert_eq!(json["needsYou"], 1);
        assert_eq!(
            json["line"][1],
            serde_json::json!({"kind": "needs_input", "count": 1, "text": "1 needs you"})
        );
    }

    #[test]
    fn the_fleet_counts_its_unarchived_rows_and_says_their_line() {
        let mut f = FleetCounts::default();
        f.add(Bucket::Failed, false);
        f.add(Bucket::NeedsInput, false);
        f.add(Bucket::Attention, false);
        f.add(Bucket::NeedsInput, true);
        assert_eq!(f.archived, 1);
        assert_eq!(f.line(), "0 running · 1 needs you · 1 failed · 3 total");
        let json = serde_json::to_value(f).unwrap();
        assert_eq!(json["archived"], 1);
        assert_eq!(json["tally"]["line"][2]["text"], "1 failed");
    }
}
