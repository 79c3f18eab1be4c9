//! A record as the cache keeps it when it can: its fields in a binary form that reads back
//! several times faster than its JSON (the parse was a third of a 100,000-record start's CPU,
//! docs/benchmarks.md). Only records of the common shape are kept so; one with anything else
//! (extras this version does not know, a held turn, an armed notice, a budget) is kept as its
//! file's bytes, and parsed as its file would be.
//!
//! The form is never trusted on its own: the build keeps it only when it reads back into the
//! very records the file's bytes parse into, whole and at rest ([`encode_checked`]). A field
//! added to the record and forgotten here therefore makes the build keep the JSON, not lose
//! the field.

use uuid::Uuid;

use crate::model::usage::{LastRun, Usage};
use crate::model::{
    AgentConfig, AgentId, AgentRecord, AttentionReason, BatchId, Labels, Persistence, Status,
    Timestamp,
};

/// `bytes`, the file's, in the binary form if the record they hold has the common shape and
/// reads back from it exactly as from them (whole and at rest); `None` otherwise.
pub(super) fn encode_checked(bytes: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let whole = AgentRecord::from_json_boxed(bytes).ok()?;
    let at_rest = AgentRecord::from_json_at_rest(bytes).ok()?;
    out.clear();
    encode(&whole, out)?;
    let same = decode(out, false).is_some_and(|r| r == whole)
        && decode(out, true).is_some_and(|r| r == at_rest);
    same.then_some(())
}

/// Writes `r` (a record read whole) in the binary form; `None` if it has a part the form does
/// not hold.
fn encode(r: &AgentRecord, out: &mut Vec<u8>) -> Option<()> {
    let c = &r.config;
    let plain = r.extra.is_empty()
        && c.extra.is_empty()
        && !c.system_prompt_on_disk
        && !r.last_message_on_disk
        && r.notify_arm.is_none()
        && r.held_turn.is_none()
        && r.waiting_prompt.is_none()
        && r.budget.is_none()
        && r.persistence.as_ref().is_none_or(|p| p.extra.is_empty())
        && r.usage.extra.is_empty()
        && r.last_run.as_ref().is_none_or(|l| l.extra.is_empty());
    if !plain {
        return None;
    }
    let mut w = Out(out);
    w.bytes(r.id.as_uuid().as_bytes());
    w.str(&r.provider)?;
    w.str(&r.cwd)?;
    w.opt_str(r.workspace_id.as_ref().map(|x| x.as_str()))?;
    w.str(&r.title)?;
    w.u64(r.labels.len() as u64);
    for (k, v) in r.labels.iter() {
        w.str(k)?;
        w.str(v)?;
    }
    w.u8(status_code(r.last_status));
    w.i64(r.created_at.millis());
    w.i64(r.updated_at.millis());
    w.opt_time(r.last_activity_at)?;
    w.opt_time(r.last_user_message_at)?;
    w.opt_str(c.model.as_deref())?;
    w.opt_str(c.mode.as_deref())?;
    w.opt_str(c.system_prompt.as_deref())?;
    w.u8(c.unconfined.into());
    w.opt(r.persistence.as_deref(), |w, p| {
        w.opt_str(p.session_id.as_deref())
    })?;
    w.u8(r.requires_attention.into());
    w.u8(r.attention_reason.map_or(0, reason_code));
    w.opt_time(r.attention_timestamp)?;
    w.opt_str(r.last_error.as_deref())?;
    w.opt_time(r.archived_at)?;
    w.u8(r.auto_archive.into());
    w.u8(r.notify_on_finish.into());
    w.opt(r.created_by, |w, id| {
        w.bytes(id.as_uuid().as_bytes());
        Some(())
    })?;
    w.opt_str(r.archive_batch_id.as_ref().map(|x| x.as_str()))?;
    w.opt_str(r.created_workspace_id.as_ref().map(|x| x.as_str()))?;
    w.opt_str(r.last_message.as_deref())?;
    w.u64(r.turn_count);
    w.u8(r.auto_archive_done.into());
    // Not `is_empty` (no turns): tokens with no turn are still kept.
    let usage = (*r.usage != Usage::default()).then_some(&*r.usage);
    w.opt(usage, |w, u| {
        for x in [
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.turns,
        ] {
            w.u64(x);
        }
        w.opt_f64(u.cost_usd)?;
        w.opt_f64(u.session_cost_usd)
    })?;
    w.opt(r.last_run.as_deref(), |w, l| {
        w.u64(l.wall_ms);
        w.opt(l.exit_code, |w, c| {
            w.i64(c.into());
            Some(())
        })
    })
}

/// The record `b` holds, whole or at rest (its system prompt and last message left in its
/// file, as [`AgentRecord::from_json_at_rest`] leaves them); `None` if `b` is not one.
pub(crate) fn decode(b: &[u8], at_rest: bool) -> Option<Box<AgentRecord>> {
    let mut i = In { b, at: 0 };
    let id = AgentId::from_uuid(Uuid::from_bytes(i.uuid()?));
    let provider = i.str()?;
    let cwd = i.str()?;
    let mut r = Box::new(AgentRecord::new(
        id,
        String::new(),
        String::new(),
        Status::Closed,
        Timestamp::from_millis(0),
    ));
    r.provider = provider.into();
    r.cwd = cwd.into();
    r.workspace_id = i.opt_str()?.map(str::parse).transpose().ok()?;
    r.title = i.str()?.to_string();
    let n = i.u64()?;
    let start = i.at;
    for _ in 0..n {
        i.str()?;
        i.str()?;
    }
    let mut pairs = In {
        b: &b[start..i.at],
        at: 0,
    };
    r.labels = Labels::from_ordered(std::iter::from_fn(move || {
        Some((pairs.str()?, pairs.str()?))
    }));
    r.last_status = status_of(i.u8()?)?;
    r.created_at = Timestamp::from_millis(i.i64()?);
    r.updated_at = Timestamp::from_millis(i.i64()?);
    r.last_activity_at = i.opt_time()?;
    r.last_user_message_at = i.opt_time()?;
    let mut config = AgentConfig {
        model: i.opt_str()?.map(Into::into),
        mode: i.opt_str()?.map(Into::into),
        ..AgentConfig::default()
    };
    match i.opt_str()? {
        Some(_) if at_rest => config.system_prompt_on_disk = true,
        p => config.system_prompt = p.map(str::to_string),
    }
    config.unconfined = i.flag()?;
    r.config = config.shared();
    r.persistence = i.opt(|i| {
        Some(Box::new(Persistence {
            session_id: i.opt_str()?.map(str::to_string),
            ..Persistence::default()
        }))
    })?;
    r.requires_attention = i.flag()?;
    r.attention_reason = match i.u8()? {
        0 => None,
        c => Some(reason_of(c)?),
    };
    r.attention_timestamp = i.opt_time()?;
    r.last_error = i.opt_str()?.map(str::to_string);
    r.archived_at = i.opt_time()?;
    r.auto_archive = i.flag()?;
    r.notify_on_finish = i.flag()?;
    r.created_by = i.opt(|i| Some(AgentId::from_uuid(Uuid::from_bytes(i.uuid()?))))?;
    r.archive_batch_id = i.opt(|i| batch_id(i.str()?))?;
    r.created_workspace_id = i.opt_str()?.map(str::parse).transpose().ok()?;
    match i.opt_str()? {
        Some(_) if at_rest => r.last_message_on_disk = true,
        m => r.last_message = m.map(str::to_string),
    }
    r.turn_count = i.u64()?;
    r.auto_archive_done = i.flag()?;
    let usage = i.opt(|i| {
        Some(Usage {
            input_tokens: i.u64()?,
            output_tokens: i.u64()?,
            cache_read_tokens: i.u64()?,
            cache_write_tokens: i.u64()?,
            turns: i.u64()?,
            cost_usd: i.opt_f64()?,
            session_cost_usd: i.opt_f64()?,
            ..Usage::default()
        })
    })?;
    r.usage = usage.unwrap_or_default().into();
    r.last_run = i.opt(|i| {
        Some(Box::new(LastRun {
            wall_ms: i.u64()?,
            exit_code: i.opt(|i| i32::try_from(i.i64()?).ok())?,
            extra: Default::default(),
        }))
    })?;
    (i.at == b.len()).then_some(r)
}

/// The batch id `s`, one copy per reading thread: the records of a batch are spread over its
/// folders, and a copy made for each (freed again when the engine keeps one for all) would
/// leave a hole in the heap between the records (≈ 2 MB at 100,000 records, half archived).
fn batch_id(s: &str) -> Option<BatchId> {
    thread_local! {
        static SEEN: std::cell::RefCell<rustc_hash::FxHashSet<BatchId>> = Default::default();
    }
    SEEN.with_borrow_mut(|seen| {
        if let Some(b) = seen.get(s) {
            return Some(b.clone());
        }
        let b: BatchId = s.parse().ok()?;
        seen.insert(b.clone());
        Some(b)
    })
}

fn status_code(s: Status) -> u8 {
    match s {
        Status::Initializing => 1,
        Status::Idle => 2,
        Status::Running => 3,
        Status::Error => 4,
        Status::Closed => 5,
    }
}

fn status_of(c: u8) -> Option<Status> {
    Some(match c {
        1 => Status::Initializing,
        2 => Status::Idle,
        3 => Status::Running,
        4 => Status::Error,
        5 => Status::Closed,
        _ => return None,
    })
}

fn reason_code(r: AttentionReason) -> u8 {
    match r {
        AttentionReason::Finished => 1,
        AttentionReason::Error => 2,
        AttentionReason::Permission => 3,
        AttentionReason::Canceled => 4,
    }
}

fn reason_of(c: u8) -> Option<AttentionReason> {
    Some(match c {
        1 => AttentionReason::Finished,
        2 => AttentionReason::Error,
        3 => AttentionReason::Permission,
        4 => AttentionReason::Canceled,
        _ => return None,
    })
}

/// Writing the form: numbers little-endian, strings as their length then their bytes, an
/// absent value as a 0 byte and a present one as a 1 before it.
struct Out<'a>(&'a mut Vec<u8>);

impl Out<'_> {
    fn u8(&mut self, x: u8) {
        self.0.push(x);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn u64(&mut self, x: u64) {
        self.bytes(&x.to_le_bytes());
    }
    fn i64(&mut self, x: i64) {
        self.bytes(&x.to_le_bytes());
    }
    /// `None` for a string too long for its length's four bytes (the JSON is kept then).
    fn str(&mut self, s: &str) -> Option<()> {
        let len = u32::try_from(s.len()).ok()?;
        self.bytes(&len.to_le_bytes());
        self.bytes(s.as_bytes());
        Some(())
    }
    /// `v`: a 0 byte when absent; a 1, then what `put` writes of it, when present.
    fn opt<T>(&mut self, v: Option<T>, put: impl FnOnce(&mut Self, T) -> Option<()>) -> Option<()> {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                put(self, v)?;
            }
        }
        Some(())
    }
    fn opt_str(&mut self, s: Option<&str>) -> Option<()> {
        self.opt(s, Self::str)
    }
    fn opt_time(&mut self, t: Option<Timestamp>) -> Option<()> {
        self.opt(t, |w, t| {
            w.i64(t.millis());
            Some(())
        })
    }
    fn opt_f64(&mut self, x: Option<f64>) -> Option<()> {
        self.opt(x, |w, x| {
            w.u64(x.to_bits());
            Some(())
        })
    }
}

/// Reading the form, every step checked against its end.
#[derive(Clone)]
struct In<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len())?;
        let s = &self.b[self.at..end];
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn flag(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn uuid(&mut self) -> Option<[u8; 16]> {
        self.take(16)?.try_into().ok()
    }
    fn str(&mut self) -> Option<&'a str> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().ok()?);
        std::str::from_utf8(self.take(len as usize)?).ok()
    }
    /// What [`Out::opt`] wrote: `None` for a 0 byte, what `get` reads after a 1.
    fn opt<T>(&mut self, get: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.u8()? {
            0 => Some(None),
            1 => get(self).map(Some),
            _ => None,
        }
    }
    fn opt_str(&mut self) -> Option<Option<&'a str>> {
        self.opt(Self::str)
    }
    fn opt_time(&mut self) -> Option<Option<Timestamp>> {
        self.opt(|i| i.i64().map(Timestamp::from_millis))
    }
    fn opt_f64(&mut self) -> Option<Option<f64>> {
        self.opt(|i| i.u64().map(f64::from_bits))
    }
}

#[cfg(test)]
#[path = "binary_tests.rs"]
mod tests;
