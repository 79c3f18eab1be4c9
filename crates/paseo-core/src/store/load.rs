//! Loading every agent record at start (SPEC 1), on every core: folders are listed and records
//! read and parsed by a few threads taking work in turn, each holding at most one folder and one
//! file open, so 100,000 records never come near the file-descriptor limit. The result does not depend on the
//! threads' timing: records come back in path order (folders by name, files by name within
//! them), and what cannot be read is set aside afterwards, in that same order, on one thread.
//! A file that is as the records cache has it is parsed from the cache's copy instead of read
//! ([`super::records_cache`]): the same bytes, so the same result.

use std::ffi::{CString, OsStr, OsString};
use std::fs;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::records_cache::{binary, CacheUse, CachedFolder, Hit, Kind, RecordsCache};
use super::{atomic, quarantine, Layout, Quarantined, StoreError};
use crate::model::{AgentId, AgentRecord};

/// Everything found under `agents/`.
#[derive(Debug, Default)]
pub struct LoadedAgents {
    /// Each record, in path order.
    pub records: Vec<LoadedRecord>,
    pub quarantined: Vec<Quarantined>,
    /// Files that could not even be moved aside (reported, left in place).
    pub problems: Vec<String>,
    /// What the load found and used of the records cache.
    pub cache: CacheUse,
}

/// One record as read.
#[derive(Debug)]
pub struct LoadedRecord {
    /// Boxed from the parse on: a record is ≈ 1 KB, and it moves on to the engine.
    pub record: Box<AgentRecord>,
    /// The file it came from when that is not where [`Layout::record_path`] puts it (rewrites
    /// go back to the same file). Worked out by the reading threads: nearly every record is
    /// where it belongs, and a path per record, made on one thread and freed on another, cost
    /// the start more than its parse.
    pub stray_path: Option<PathBuf>,
}

impl LoadedRecord {
    /// The file it came from.
    pub fn path(&self, layout: &Layout) -> PathBuf {
        self.stray_path
            .clone()
            .unwrap_or_else(|| layout.record_path(&self.record.cwd, self.record.id))
    }
}

/// Record files (of one folder) one thread takes at a time: enough that taking work costs
/// nothing next to reading it, few enough that the threads finish together.
const FILES_PER_TURN: usize = 64;

/// Reading threads: every core, and at least 4 so a cold page cache has reads in flight while
/// others parse.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(4, 8)
}

/// Loads every agent record. Files that do not parse are moved to `quarantine/` and reported;
/// files that cannot be read are reported and left in place; none is dropped or deleted.
pub fn load_agents(layout: &Layout) -> Result<LoadedAgents, StoreError> {
    load_agents_on(layout, threads(), false)
}

/// [`load_agents`] for the runtime: every agent at rest, its system prompt left in its file
/// ([`crate::model::AgentConfig::system_prompt_on_disk`]).
pub fn load_agents_at_rest(layout: &Layout) -> Result<LoadedAgents, StoreError> {
    load_agents_on(layout, threads(), true)
}

/// [`load_agents`] with `threads` threads (1: the plain sequential loop, for tests to compare),
/// `at_rest` or whole.
pub(crate) fn load_agents_on(
    layout: &Layout,
    threads: usize,
    at_rest: bool,
) -> Result<LoadedAgents, StoreError> {
    let dirs = list_folders(layout)?;
    let cache = RecordsCache::open(layout);
    let folders = in_turn(
        &dirs,
        threads,
        |_| (),
        |_, dir| list_records(dir, cache.as_ref()),
    )?;
    // Turns of files within one folder, which is opened once for them.
    let turns: Vec<(&Folder, Range<usize>)> = folders
        .iter()
        .flat_map(|f| {
            let n = f.len();
            (0..n)
                .step_by(FILES_PER_TURN)
                .map(move |s| (f, s..(s + FILES_PER_TURN).min(n)))
        })
        .collect();
    let (parsed, scratches) = in_turn_with_states(
        &turns,
        threads,
        |thread| Scratch {
            thread,
            ..Scratch::default()
        },
        |scratch, (folder, range)| read_turn(folder, range.clone(), scratch, at_rest),
    )?;
    let mut out = LoadedAgents {
        cache: CacheUse {
            entries: cache.as_ref().map_or(0, RecordsCache::len),
            used: parsed.iter().map(|t| t.used).sum(),
            listings: folders
                .iter()
                .filter(|f| matches!(f.names, Names::Cached(_)))
                .count(),
        },
        ..LoadedAgents::default()
    };
    out.records.reserve(parsed.iter().map(|t| t.records).sum());
    // Each thread's results, in the order it read its turns (which is the turns' order).
    let mut read: Vec<_> = scratches.into_iter().map(|s| s.out.into_iter()).collect();
    let in_order = parsed
        .iter()
        .flat_map(|t| (0..t.records).map(move |_| t.thread));
    for r in in_order.filter_map(|thread| read[thread].next()) {
        match r {
            Ok(rec) => out.records.push(rec),
            Err((path, Failure::Invalid(reason))) => match quarantine(layout, &path, &reason) {
                Ok(q) => out.quarantined.push(q),
                Err(e) => out.problems.push(format!(
                    "{} could not be read ({reason}) nor moved to quarantine: {e}",
                    path.display()
                )),
            },
            // Only bytes that fail to parse are known bad (SPEC 1). A read that fails (permission
            // denied, an I/O error) says nothing about the record: moving it aside would take a
            // good record from where the next start finds it once the cause is fixed.
            Err((path, Failure::Unreadable(reason))) => {
                let line = format!(
                    "{} could not be read ({reason}); it was left in place and will load once it \
                     can be read",
                    path.display()
                );
                tracing::warn!("{line}");
                out.problems.push(line);
            }
        }
    }
    Ok(out)
}

/// `f` applied to every item by `threads` threads, each taking the next item in turn (with its
/// own `state`); the results in the items' order, whatever the threads' timing.
fn in_turn<T, S, R>(
    items: &[T],
    threads: usize,
    state: impl Fn(usize) -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Result<Vec<R>, StoreError>
where
    T: Sync,
    R: Send,
    S: Send,
{
    in_turn_with_states(items, threads, state, f).map(|(r, _)| r)
}

/// [`in_turn`], with each thread's state at its end, by the thread's number (`state` is given
/// it: 0, 1, …).
fn in_turn_with_states<T, S, R>(
    items: &[T],
    threads: usize,
    state: impl Fn(usize) -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Result<(Vec<R>, Vec<S>), StoreError>
where
    T: Sync,
    R: Send,
    S: Send,
{
    let next = AtomicUsize::new(0);
    let done: Vec<(Vec<(usize, R)>, S)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.min(items.len()))
            .map(|thread| {
                let (state, f, next) = (&state, &f, &next);
                s.spawn(move || {
                    let mut st = state(thread);
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return (mine, st);
                        };
                        mine.push((i, f(&mut st, item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .map_err(|_| StoreError::LoadThread("it panicked".into()))
            })
            .collect::<Result<_, _>>()
    })?;
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let mut states = Vec::with_capacity(done.len());
    for (mine, st) in done {
        for (i, r) in mine {
            slots[i] = Some(r);
        }
        states.push(st);
    }
    let out = slots
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.ok_or_else(|| StoreError::LoadThread(format!("turn {i} lost"))))
        .collect::<Result<_, _>>()?;
    Ok((out, states))
}

/// The folders under `agents/` (one per cwd), by name.
pub(super) fn list_folders(layout: &Layout) -> Result<Vec<PathBuf>, StoreError> {
    let dir = layout.agents_dir();
    let top = match fs::read_dir(&dir) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(StoreError::Read {
                path: dir.display().to_string(),
                source: e,
            })
        }
    };
    // File types come from the directory entries (no stat per entry).
    let mut dirs: Vec<PathBuf> = top
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort_unstable();
    Ok(dirs)
}

/// One folder's record files, by name.
struct Folder<'c> {
    dir: PathBuf,
    names: Names<'c>,
}

/// Where a folder's names come from.
enum Names<'c> {
    /// Its listing, read; with the cache's part for the folder, if it has one.
    Listed(Vec<OsString>, Option<CachedFolder<'c>>),
    /// The cache's copy of its listing, which the folder still has.
    Cached(CachedFolder<'c>),
}

impl<'c> Folder<'c> {
    fn len(&self) -> usize {
        match &self.names {
            Names::Listed(n, _) => n.len(),
            Names::Cached(c) => c.len(),
        }
    }

    fn name(&self, i: usize) -> &OsStr {
        match &self.names {
            Names::Listed(n, _) => &n[i],
            Names::Cached(c) => c.name(i),
        }
    }

    /// The cache's part for the folder.
    fn cached(&self) -> Option<CachedFolder<'c>> {
        match self.names {
            Names::Listed(_, c) => c,
            Names::Cached(c) => Some(c),
        }
    }

    /// Where the cache has file `i`'s record, if the file in `dir` is as cached.
    fn hit(&self, dir: &fs::File, i: usize) -> Option<Hit> {
        match &self.names {
            Names::Listed(n, c) => c.as_ref()?.hit(dir, &n[i]),
            // The cache's own listing: its entries in order, no lookup.
            Names::Cached(c) => c.hit_at(dir, i),
        }
    }
}

/// The `*.json` files of one folder, by name, removing temp files a crash left behind; as the
/// cache holds them if the folder has not changed since (no temp file can be there then: the
/// cache keeps no listing that had one).
fn list_records<'c>(dir: &Path, cache: Option<&'c RecordsCache>) -> Folder<'c> {
    let cached = cache.and_then(|c| c.folder(dir.file_name()?));
    let unchanged = cached.filter(|c| fs::File::open(dir).is_ok_and(|d| c.listing_holds(&d)));
    Folder {
        dir: dir.to_path_buf(),
        names: match unchanged {
            Some(c) => Names::Cached(c),
            None => Names::Listed(record_names(dir, true).names, cached),
        },
    }
}

/// A folder's record files as listed.
pub(super) struct Listing {
    /// The names of its record files (`*.json`, plain files), sorted.
    pub names: Vec<OsString>,
    /// Temp files a crash left there (removed, if asked).
    pub leftovers: usize,
}

/// The record files in `dir`; with `remove_leftovers`, the temp files a crash left there are
/// removed (only under the data root's lock, before anything writes).
pub(super) fn record_names(dir: &Path, remove_leftovers: bool) -> Listing {
    let mut names = Vec::new();
    let mut leftovers = 0;
    if let Ok(inner) = fs::read_dir(dir) {
        for f in inner.flatten() {
            let name = f.file_name();
            let text = name.to_string_lossy();
            if text.starts_with(atomic::TEMP_PREFIX) {
                // A write that never reached its rename: the old record is intact.
                leftovers += 1;
                if remove_leftovers {
                    let _ = fs::remove_file(f.path());
                }
                continue;
            }
            if text.ends_with(".json") && f.file_type().is_ok_and(|t| t.is_file()) {
                names.push(name);
            }
        }
    }
    names.sort_unstable();
    Listing { names, leftovers }
}

/// What a reading thread reuses from one record to the next.
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    /// The last record's id as its file name would spell it.
    name: String,
    /// The last cwd seen, and whether its records belong in the folder being read.
    cwd: String,
    cwd_here: bool,
    /// The cached bytes of the turn's files, read in one go.
    span: Vec<u8>,
    /// Which reading thread this is (the threads' results are put in order at the end).
    thread: usize,
    /// Every turn's records and failures, in the order this thread read them: one vector per
    /// thread, not one per turn of 64 files, whose 1,600 blocks would be freed at the end of the
    /// load between the records (a few MB of the heap's pages kept for nothing).
    out: Vec<Result<LoadedRecord, (PathBuf, Failure)>>,
}

/// Why a record file did not load.
#[derive(Debug)]
enum Failure {
    /// Its bytes could not be read: the file is left where it is.
    Unreadable(String),
    /// It was read and is not a record (or not the one its name says): quarantined.
    Invalid(String),
}

/// The most a turn reads of the cache in one go; hits further apart are read one by one.
const MAX_SPAN: u64 = 4 << 20;

/// One turn as read: its records (and what did not load, with its path and why) are in its
/// thread's [`Scratch::out`].
struct Turn {
    thread: usize,
    /// How many it put there.
    records: usize,
    /// How many of them came from the cache.
    used: usize,
}

/// Reads and parses the files `range` of `folder` (from the cache's copy where a file is as it
/// was cached).
fn read_turn(folder: &Folder, range: Range<usize>, scratch: &mut Scratch, at_rest: bool) -> Turn {
    let cached = folder.cached();
    let dir = fs::File::open(&folder.dir);
    // A new folder: what was worked out for the last cwd was about another one.
    scratch.cwd.clear();
    let folder_name = folder.dir.file_name().and_then(|n| n.to_str());
    // The stamps first, then one read of the cached bytes of every file that kept its own.
    let hits: Vec<Option<Hit>> = match &dir {
        Ok(dir) if cached.is_some() => range.clone().map(|i| folder.hit(dir, i)).collect(),
        _ => Vec::new(),
    };
    let first = hits.iter().flatten().next().map(|h| h.at);
    let end = hits.iter().flatten().last().map(|h| h.at + h.len);
    let span_at = match (cached, first, end) {
        (Some(c), Some(a), Some(e)) if e - a <= MAX_SPAN => {
            c.read(a, e - a, &mut scratch.span).ok().map(|()| a)
        }
        _ => None,
    };
    let mut used = 0;
    let records = range.len();
    let mut out = std::mem::take(&mut scratch.out);
    let read = range.enumerate().map(|(i, at)| {
        let name = folder.name(at);
        let hit = hits.get(i).copied().flatten();
        let from_cache = hit.and_then(|h| {
            let bytes = match span_at {
                Some(a) => &scratch.span[(h.at - a) as usize..(h.at - a + h.len) as usize],
                None => {
                    cached?.read(h.at, h.len, &mut scratch.buf).ok()?;
                    &scratch.buf[..]
                }
            };
            // Bytes that do not make this file's record are read from the file, whose
            // reading says what is wrong.
            if !h.holds(bytes) {
                return None;
            }
            match h.kind {
                Kind::Json => parse_named(bytes, name, at_rest).ok(),
                Kind::Binary => {
                    binary::decode(bytes, at_rest).filter(|r| named_after(name, r).is_ok())
                }
            }
        });
        used += usize::from(from_cache.is_some());
        let record = match (from_cache, &dir) {
            (Some(r), _) => Ok(r),
            (None, Ok(dir)) => read_record(dir, name, &mut scratch.buf, at_rest),
            (None, Err(e)) => Err(Failure::Unreadable(format!("its folder: {e}"))),
        };
        match record {
            Ok(record) => {
                let home = record_belongs_here(&record, folder_name, name, scratch);
                Ok(LoadedRecord {
                    stray_path: (!home).then(|| folder.dir.join(name)),
                    record,
                })
            }
            Err(reason) => Err((folder.dir.join(name), reason)),
        }
    });
    out.extend(read);
    scratch.out = out;
    Turn {
        thread: scratch.thread,
        records,
        used,
    }
}

/// Whether `record`, read from the file `name` in the folder `folder_name`, is where
/// [`Layout::record_path`] puts it: the folder named after its cwd, the file after its id.
fn record_belongs_here(
    record: &AgentRecord,
    folder_name: Option<&str>,
    name: &OsStr,
    scratch: &mut Scratch,
) -> bool {
    use std::fmt::Write;
    if scratch.cwd != record.cwd || scratch.cwd.is_empty() {
        scratch.cwd.clear();
        scratch.cwd.push_str(&record.cwd);
        scratch.cwd_here = folder_name == Some(super::paths::cwd_with_dashes(&record.cwd).as_str());
    }
    scratch.name.clear();
    let _ = write!(scratch.name, "{}.json", record.id);
    scratch.cwd_here && name.to_str() == Some(scratch.name.as_str())
}

/// What one read asks for: a record is ≈ 1.2 KB, so almost every one comes in a single read.
const ONE_READ: usize = 16 * 1024;

/// Reads and parses the record `name` in the folder `dir` is open on into `buf` (reused across
/// files).
fn read_record(
    dir: &fs::File,
    name: &OsStr,
    buf: &mut Vec<u8>,
    at_rest: bool,
) -> Result<Box<AgentRecord>, Failure> {
    let unreadable = |e: io::Error| Failure::Unreadable(e.to_string());
    use std::io::Read;
    let mut f = open_at(dir, name).map_err(unreadable)?;
    // One read into a buffer larger than the file, its short count taken as the end: open,
    // read, close (no second read to find the end, 100,000 times at start). Should a read ever
    // stop short of the end, the parse fails and the rest is read before anything is judged.
    // Sized once per thread and never shrunk: what lies past a read's count is never looked at.
    if buf.len() < ONE_READ {
        buf.resize(ONE_READ, 0);
    }
    let n = loop {
        match f.read(buf) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(e)),
        }
    };
    if n < buf.len() {
        if let Ok(rec) = parse_named(&buf[..n], name, at_rest) {
            return Ok(rec);
        }
    }
    let mut all = buf[..n].to_vec();
    f.read_to_end(&mut all).map_err(unreadable)?;
    parse_named(&all, name, at_rest)
}

/// Parses the bytes of the record file `name`, which must hold the record its name says.
fn parse_named(bytes: &[u8], name: &OsStr, at_rest: bool) -> Result<Box<AgentRecord>, Failure> {
    let parse = if at_rest {
        AgentRecord::from_json_at_rest
    } else {
        AgentRecord::from_json_boxed
    };
    let rec = parse(bytes).map_err(|e| Failure::Invalid(format!("invalid agent record: {e}")))?;
    named_after(name, &rec)?;
    Ok(rec)
}

/// Whether the file `name` is named after the id `rec` holds; compared as ids (no allocation
/// per record).
fn named_after(name: &OsStr, rec: &AgentRecord) -> Result<(), Failure> {
    let stem = Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if stem.parse::<AgentId>().ok() != Some(rec.id) {
        return Err(Failure::Invalid(format!(
            "file name {stem:?} does not match the record's id {}",
            rec.id
        )));
    }
    Ok(())
}

/// Opens `name` in the folder `dir` is open on (openat): the kernel does not walk the whole
/// path again for every file, a fifth of the system time of opening 100,000 records. Without
/// updating the file's access time where the user owns it (`O_NOATIME`): the first read of a
/// record written since the last start would otherwise write its inode back, a journal update
/// per record (docs/benchmarks.md).
pub(super) fn open_at(dir: &fs::File, name: &OsStr) -> io::Result<fs::File> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    let name = CString::new(name.as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)?;
    let open = |flags: libc::c_int| {
        // SAFETY: openat on the descriptor `dir` owns, with a NUL-terminated name that outlives
        // the call; it returns a new descriptor or -1.
        unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) }
    };
    let plain = libc::O_RDONLY | libc::O_CLOEXEC;
    let mut fd = open(plain | libc::O_NOATIME);
    // A file someone else owns refuses O_NOATIME (EPERM): read it as any reader would.
    if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) {
        fd = open(plain);
    }
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened here and nothing else owns it.
    Ok(unsafe { fs::File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests;
