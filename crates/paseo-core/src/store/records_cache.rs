//! A copy of the settled record files in one file (`cache/records.bin`), so that a start at
//! 100,000 records reads one file instead of opening, reading and closing 100,000 (SPEC 1's
//! load; docs/scale.md, "The records cache").
//!
//! The record files stay the truth. The cache holds each file's bytes exactly as they were,
//! with the file's stamp (inode, size, modification and change times). A start uses an entry
//! only when the file it names still has that stamp (one `fstatat`, no open or read), and
//! parses the entry's bytes as it would have parsed the file's. Anything else (no cache, a
//! cache from another format or cut short, an entry whose file changed) reads the file. So a
//! load with the cache gives the same records, the same quarantine and the same problems as a
//! load without it.
//!
//! Why a stamp can be trusted: the app replaces a record by writing a new file and renaming it
//! over the old one, so a rewrite has a new inode and a new change time. An edit in place (a
//! user's editor) changes the change time, which nobody can set back. The one gap is an edit
//! within the same clock tick as the stamp was taken; so a file whose times are less than
//! [`SETTLE`] before the cache's build is left out of it (read from its file each start until
//! the next build), as git does with its index.
//!
//! The cache is written by [`rebuild`] off the start's path, at idle priority, into a temp
//! file that is synced and renamed over the old one: a crash leaves the old cache or the new.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{atomic, load, Layout};

/// The first bytes of a cache file; the last byte is the format's version.
const MAGIC: &[u8; 8] = b"PASEORC\x01";
/// The header: magic, where the index starts, its length, the file's length.
const HEADER: usize = 32;
/// How long before the build a file's times must be to be kept (see the module's note).
pub const SETTLE: Duration = Duration::from_secs(2);
/// The largest index a cache may have (≈ 5 million records).
const MAX_INDEX: u64 = 512 << 20;
/// Fewer records than this load in a few milliseconds from their files: no cache is kept.
pub const MIN_RECORDS: usize = 2_000;

/// What identifies one version of a file: a rewrite by rename changes the inode and the change
/// time, an edit in place the change time (which cannot be set back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(st: &libc::stat) -> Stamp {
        Stamp {
            ino: st.st_ino,
            size: st.st_size as u64,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
        }
    }

    /// The stamp of `name` in the folder `dir` is open on, without following a link (record
    /// files that are links are not loaded at all).
    pub(crate) fn at(dir: &File, name: &OsStr) -> io::Result<Stamp> {
        use std::os::fd::AsRawFd;
        let name =
            std::ffi::CString::new(name.as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: fstatat on the descriptor `dir` owns, with a NUL-terminated name that outlives
        // the call, into a buffer of the right type; on success the kernel filled it.
        let rc = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                name.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat returned 0, so it wrote the whole struct.
        Ok(Stamp::of(unsafe { &st.assume_init() }))
    }

    /// The stamp of the open file `f`.
    fn of_file(f: &File) -> io::Result<Stamp> {
        use std::os::fd::AsRawFd;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: fstat on a descriptor `f` owns, into a buffer of the right type.
        let rc = unsafe { libc::fstat(f.as_raw_fd(), st.as_mut_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstat returned 0, so it wrote the whole struct.
        Ok(Stamp::of(unsafe { &st.assume_init() }))
    }

    /// Whether both its times are at least [`SETTLE`] before `built` (seconds and nanoseconds
    /// since the epoch).
    fn settled_before(&self, built: (i64, i64)) -> bool {
        let settle = SETTLE.as_secs() as i64;
        let before = |t: (i64, i64)| (t.0 + settle, t.1) < built;
        before(self.mtime) && before(self.ctime)
    }
}

/// One file's entry: its name (a range of the index), its stamp and where its bytes are.
#[derive(Clone, Copy, Debug)]
struct Entry {
    name: (usize, usize),
    stamp: Stamp,
    at: u64,
}

/// One folder's entries, by name.
#[derive(Debug)]
struct Folder {
    name: (usize, usize),
    entries: Vec<Entry>,
}

/// A cache file opened for a load: its index in memory, its record bytes read on demand.
#[derive(Debug)]
pub(crate) struct RecordsCache {
    file: File,
    index: Vec<u8>,
    folders: Vec<Folder>,
}

/// Where one cached file's bytes are, once its stamp matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub at: u64,
    pub len: u64,
}

/// One folder of the cache, for a reading thread.
#[derive(Clone, Copy)]
pub(crate) struct CachedFolder<'a> {
    cache: &'a RecordsCache,
    folder: &'a Folder,
}

impl CachedFolder<'_> {
    /// The bytes of `name` as cached, if the file in `dir` still has the stamp they were
    /// cached with.
    pub(crate) fn hit(&self, dir: &File, name: &OsStr) -> Option<Hit> {
        let idx = &self.cache.index;
        let key = name.as_bytes();
        let i = self
            .folder
            .entries
            .binary_search_by(|e| idx[e.name.0..e.name.1].cmp(key))
            .ok()?;
        let e = self.folder.entries[i];
        (Stamp::at(dir, name).ok()? == e.stamp).then_some(Hit {
            at: e.at,
            len: e.stamp.size,
        })
    }

    /// Reads `len` bytes from `at` into `buf` (replacing its content).
    pub(crate) fn read(&self, at: u64, len: u64, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.clear();
        buf.resize(len as usize, 0);
        self.cache.file.read_exact_at(buf, at)
    }
}

/// Why a cache file was not used (logged; the load reads the record files instead).
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cannot read the records cache: {0}")]
    Io(#[from] io::Error),
    #[error("the records cache is not in this version's format or is cut short: {0}")]
    Format(&'static str),
    #[error("cannot list the records for the records cache: {0}")]
    Store(#[from] super::StoreError),
}

impl RecordsCache {
    /// The cache of `layout`, if there is one this version can use; `None` (after a log line
    /// saying why, unless there is simply none) otherwise.
    pub(crate) fn open(layout: &Layout) -> Option<RecordsCache> {
        match Self::try_open(&layout.records_cache_path()) {
            Ok(c) => Some(c),
            Err(CacheError::Io(e)) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!("{e}; reading the record files instead");
                None
            }
        }
    }

    fn try_open(path: &Path) -> Result<RecordsCache, CacheError> {
        let mut file = File::open(path)?;
        let mut head = [0u8; HEADER];
        file.read_exact(&mut head)
            .map_err(|_| CacheError::Format("no header"))?;
        if &head[..8] != MAGIC {
            return Err(CacheError::Format("unknown format"));
        }
        let word = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().unwrap_or([0; 8]));
        let (index_at, index_len, total) = (word(8), word(16), word(24));
        if file.metadata()?.len() != total || index_at.checked_add(index_len) != Some(total) {
            return Err(CacheError::Format(
                "its length is not the one it was written with",
            ));
        }
        // An index is ≈ 100 bytes a record: one larger than this is not one this app wrote.
        if index_len > MAX_INDEX {
            return Err(CacheError::Format(
                "its index is larger than any the app writes",
            ));
        }
        let mut index = vec![0u8; index_len as usize];
        file.read_exact_at(&mut index, index_at)?;
        let folders = parse_index(&index, index_at)?;
        Ok(RecordsCache {
            file,
            index,
            folders,
        })
    }

    /// The folder named `name` (a folder of `agents/`), if the cache has it.
    pub(crate) fn folder(&self, name: &OsStr) -> Option<CachedFolder<'_>> {
        let key = name.as_bytes();
        let i = self
            .folders
            .binary_search_by(|f| self.index[f.name.0..f.name.1].cmp(key))
            .ok()?;
        Some(CachedFolder {
            cache: self,
            folder: &self.folders[i],
        })
    }

    /// How many files it holds.
    pub(crate) fn len(&self) -> usize {
        self.folders.iter().map(|f| f.entries.len()).sum()
    }
}

/// Reads the index: folders and entries, each list in strictly ascending name order, every
/// entry's bytes inside the data part (before `data_end`, where the index starts).
fn parse_index(b: &[u8], data_end: u64) -> Result<Vec<Folder>, CacheError> {
    let mut c = Cursor { b, at: 0 };
    let folders_n = c.word()?;
    let mut folders: Vec<Folder> = Vec::new();
    let mut next_data = HEADER as u64;
    for _ in 0..folders_n {
        let name = c.name()?;
        let n = c.word()?;
        let mut entries: Vec<Entry> = Vec::new();
        for _ in 0..n {
            let ename = c.name()?;
            let mut w = [0u64; 6];
            for x in w.iter_mut() {
                *x = c.word()?;
            }
            let stamp = Stamp {
                ino: w[0],
                size: w[1],
                mtime: (w[2] as i64, w[3] as i64),
                ctime: (w[4] as i64, w[5] as i64),
            };
            let end = next_data
                .checked_add(stamp.size)
                .filter(|&e| e <= data_end)
                .ok_or(CacheError::Format("an entry lies outside its data"))?;
            if entries
                .last()
                .is_some_and(|p| b[p.name.0..p.name.1] >= b[ename.0..ename.1])
            {
                return Err(CacheError::Format("its entries are out of order"));
            }
            entries.push(Entry {
                name: ename,
                stamp,
                at: next_data,
            });
            next_data = end;
        }
        if folders
            .last()
            .is_some_and(|p| b[p.name.0..p.name.1] >= b[name.0..name.1])
        {
            return Err(CacheError::Format("its folders are out of order"));
        }
        folders.push(Folder { name, entries });
    }
    if c.at != b.len() || next_data != data_end {
        return Err(CacheError::Format("its index does not cover its data"));
    }
    Ok(folders)
}

/// Reading the index, every step checked against its end.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<(usize, usize), CacheError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or(CacheError::Format("its index is cut short"))?;
        let r = (self.at, end);
        self.at = end;
        Ok(r)
    }
    fn word(&mut self) -> Result<u64, CacheError> {
        let (s, e) = self.take(8)?;
        Ok(u64::from_le_bytes(
            self.b[s..e].try_into().unwrap_or([0; 8]),
        ))
    }
    /// A name: its length, then its bytes (as a range of the index).
    fn name(&mut self) -> Result<(usize, usize), CacheError> {
        let len =
            usize::try_from(self.word()?).map_err(|_| CacheError::Format("a name too long"))?;
        self.take(len)
    }
}

/// What a load saw of the cache, for the runtime to decide on a [`rebuild`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// Files the cache held.
    pub entries: usize,
    /// Records that loaded from it.
    pub used: usize,
}

/// What to do with the cache after a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextCache {
    /// It served the load well enough.
    Keep,
    /// Write a new one: more than one file in fifty was read from its file, or is gone.
    Rebuild,
    /// Too few records to need one: remove it, so it keeps no copy of files since removed.
    Remove,
}

impl CacheUse {
    /// What to do after a load of `records` record files.
    pub fn next(&self, records: usize) -> NextCache {
        if records < MIN_RECORDS {
            return if self.entries > 0 {
                NextCache::Remove
            } else {
                NextCache::Keep
            };
        }
        let read = records - self.used.min(records);
        let gone = self.entries - self.used.min(self.entries);
        if read + gone > records / 50 {
            NextCache::Rebuild
        } else {
            NextCache::Keep
        }
    }
}

/// What a [`rebuild`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rebuilt {
    /// Files cached.
    pub cached: usize,
    /// Files left out: changed too recently to be trusted, or changing while read.
    pub unsettled: usize,
    pub bytes: u64,
}

/// Writes a new cache of every record file under `agents/` whose times are settled, replacing
/// the old one atomically. Reads the files (not what the runtime holds: the cache is a copy of
/// the files). Leaves temp files of the records' own writes alone (the runtime may be writing).
pub fn rebuild(layout: &Layout) -> Result<Rebuilt, CacheError> {
    rebuild_as_of(layout, SystemTime::now())
}

/// [`rebuild`] as if built at `now` (tests build "later", when their files have settled).
pub(crate) fn rebuild_as_of(layout: &Layout, now: SystemTime) -> Result<Rebuilt, CacheError> {
    let path = layout.records_cache_path();
    let dir = path
        .parent()
        .ok_or(CacheError::Format("the cache path has no folder"))?
        .to_path_buf();
    atomic::ensure_dir(&dir)?;
    remove_leftovers(&dir);
    let now = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let built = (now.as_secs() as i64, i64::from(now.subsec_nanos()));
    let tmp = dir.join(format!(
        "{}{}-records.bin",
        atomic::TEMP_PREFIX,
        std::process::id()
    ));
    let result = write_cache(layout, &tmp, built).and_then(|r| {
        fs::rename(&tmp, &path)?;
        atomic::sync_dir(&dir)?;
        Ok(r)
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Temp files an earlier build left when the app stopped mid-way.
fn remove_leftovers(dir: &Path) {
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with(atomic::TEMP_PREFIX)
        {
            let _ = fs::remove_file(e.path());
        }
    }
}

fn write_cache(layout: &Layout, tmp: &Path, built: (i64, i64)) -> Result<Rebuilt, CacheError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(super::private::FILE_MODE)
        .open(tmp)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(&[0u8; HEADER])?;
    let mut index: Vec<u8> = Vec::new();
    let put = |index: &mut Vec<u8>, x: u64| index.extend_from_slice(&x.to_le_bytes());
    let mut done = Rebuilt::default();
    let mut at = HEADER as u64;
    let mut folder_entries: Vec<(OsString, Vec<u8>, u64)> = Vec::new();
    let mut buf = Vec::new();
    // The folders and files a load reads, as it lists them (the runtime's temp files left be).
    for path in load::list_folders(layout)? {
        let Some(folder) = path.file_name().map(OsStr::to_os_string) else {
            continue;
        };
        let Ok(dir) = File::open(&path) else { continue };
        let names = load::record_names(&path, false);
        let mut entries = Vec::new();
        let mut count = 0u64;
        for name in names {
            let Some(stamp) = read_settled(&dir, &name, built, &mut buf) else {
                done.unsettled += 1;
                continue;
            };
            out.write_all(&buf)?;
            at += buf.len() as u64;
            put(&mut entries, name.len() as u64);
            entries.extend_from_slice(name.as_bytes());
            for w in [
                stamp.ino,
                stamp.size,
                stamp.mtime.0 as u64,
                stamp.mtime.1 as u64,
                stamp.ctime.0 as u64,
                stamp.ctime.1 as u64,
            ] {
                put(&mut entries, w);
            }
            count += 1;
            done.cached += 1;
        }
        if count > 0 {
            folder_entries.push((folder, entries, count));
        }
    }
    put(&mut index, folder_entries.len() as u64);
    for (name, entries, count) in folder_entries {
        put(&mut index, name.len() as u64);
        index.extend_from_slice(&name.into_vec());
        put(&mut index, count);
        index.extend_from_slice(&entries);
    }
    out.write_all(&index)?;
    let total = at + index.len() as u64;
    let file = out.into_inner().map_err(|e| e.into_error())?;
    let mut head = Vec::with_capacity(HEADER);
    head.extend_from_slice(MAGIC);
    for w in [at, index.len() as u64, total] {
        head.extend_from_slice(&w.to_le_bytes());
    }
    file.write_all_at(&head, 0)?;
    file.sync_all()?;
    done.bytes = total;
    Ok(done)
}

/// Reads `name` in `dir` into `buf`; its stamp if it is settled and was not changed while
/// read (its size is what was read, its stamp taken from the open file after the read).
fn read_settled(dir: &File, name: &OsStr, built: (i64, i64), buf: &mut Vec<u8>) -> Option<Stamp> {
    let mut f = load::open_at(dir, name).ok()?;
    buf.clear();
    f.read_to_end(buf).ok()?;
    let stamp = Stamp::of_file(&f).ok()?;
    (stamp.size == buf.len() as u64 && stamp.settled_before(built)).then_some(stamp)
}

#[cfg(test)]
mod tests;
