//! A copy of the settled record files in one file (`cache/records.bin`), so that a start at
//! 100,000 records reads one file instead of opening, reading and closing 100,000 (SPEC 1's
//! load; docs/scale.md, "The records cache").
//!
//! The record files stay the truth. The cache holds each file's record (in a binary form that
//! reads back as the file's bytes parse, [`binary`], or as those bytes) with the file's stamp
//! (inode, size, modification and change times). A start uses an entry only when the file it
//! names still has that stamp (one `fstatat`, no open or read). It also holds the listing of
//! each folder whose files it all holds, with the folder's own stamp: a folder that still has
//! it has the same files (adding, removing or renaming one changes it), so its listing is not
//! read again. Anything else (no cache, a cache from another format or cut short, an entry
//! whose file changed, a folder that changed) reads the folder or the file. So a load with the
//! cache gives the same records, the same quarantine and the same problems as a load without
//! it.
//!
//! Why a stamp can be trusted: the app replaces a record by writing a new file and renaming it
//! over the old one, so a rewrite has a new inode and a new change time. An edit in place (a
//! user's editor) changes the change time, which nobody can set back. The one gap is an edit
//! within the same clock tick as the stamp was taken; so a file or folder whose times are less
//! than [`SETTLE`] before the cache's build is left out of it (read from its file each start
//! until the next build), as git does with its index.
//!
//! The cache is written by [`rebuild`] off the start's path ([`build`]).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

use super::Layout;

/// The first bytes of a cache file; the last byte is the format's version (2: records in the
/// binary form, folders' listings).
const MAGIC: &[u8; 8] = b"PASEORC\x02";
/// The header: magic, where the index starts, its length, the file's length, the index's
/// CRC-32.
const HEADER: usize = 40;
/// How long before the build a file's times must be to be kept (see the module's note).
pub const SETTLE: Duration = Duration::from_secs(2);
/// The largest index a cache may have (≈ 5 million records).
const MAX_INDEX: u64 = 512 << 20;
/// Fewer records than this load in a few milliseconds from their files: no cache is kept.
pub const MIN_RECORDS: usize = 2_000;

/// What identifies one version of a file (or of a folder's listing): a rewrite by rename
/// changes the inode and the change time, an edit in place the change time (which cannot be
/// set back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// Stands for "none" in the index (a folder whose listing is not kept).
    const NONE: Stamp = Stamp {
        ino: 0,
        size: 0,
        mtime: (0, 0),
        ctime: (0, 0),
    };

    fn of(st: &libc::stat) -> Stamp {
        Stamp {
            ino: st.st_ino,
            size: st.st_size as u64,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
        }
    }

    /// As the index holds it.
    fn words(&self) -> [u64; 6] {
        [
            self.ino,
            self.size,
            self.mtime.0 as u64,
            self.mtime.1 as u64,
            self.ctime.0 as u64,
            self.ctime.1 as u64,
        ]
    }

    fn from_words(w: [u64; 6]) -> Stamp {
        Stamp {
            ino: w[0],
            size: w[1],
            mtime: (w[2] as i64, w[3] as i64),
            ctime: (w[4] as i64, w[5] as i64),
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

    /// The stamp of the open file (or folder) `f`.
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

/// How an entry holds its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The file's bytes.
    Json = 0,
    /// The binary form ([`binary`]).
    Binary = 1,
}

/// One file's entry: its name (a range of the index), its stamp and where its record is.
#[derive(Clone, Copy, Debug)]
struct Entry {
    name: (usize, usize),
    stamp: Stamp,
    at: u64,
    len: u64,
    kind: Kind,
    crc: u32,
}

/// One folder's entries, by name; with the stamp of its listing when they are all of it.
#[derive(Debug)]
struct Folder {
    name: (usize, usize),
    listing: Option<Stamp>,
    entries: Vec<Entry>,
}

/// A cache file opened for a load: its index in memory, its records read on demand.
#[derive(Debug)]
pub(crate) struct RecordsCache {
    file: File,
    index: Vec<u8>,
    folders: Vec<Folder>,
}

/// Where one cached record is, once its file's stamp matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub at: u64,
    pub len: u64,
    pub kind: Kind,
    crc: u32,
}

impl Hit {
    /// Whether `bytes` (read from where it says) are the ones cached: a record read back from
    /// damaged bytes could still be a record, only not the file's (a binary form has no syntax
    /// to break), and the runtime would write it back to the file.
    pub(crate) fn holds(&self, bytes: &[u8]) -> bool {
        crc32fast::hash(bytes) == self.crc
    }
}

/// One folder of the cache, for a reading thread.
#[derive(Clone, Copy)]
pub(crate) struct CachedFolder<'a> {
    cache: &'a RecordsCache,
    folder: &'a Folder,
}

impl<'a> CachedFolder<'a> {
    /// Whether the folder `dir` is open on still has the listing the cache holds: then its
    /// record files are the cache's entries, named by [`CachedFolder::name`].
    pub(crate) fn listing_holds(&self, dir: &File) -> bool {
        self.folder
            .listing
            .is_some_and(|s| Stamp::of_file(dir).is_ok_and(|now| now == s))
    }

    /// How many entries it has.
    pub(crate) fn len(&self) -> usize {
        self.folder.entries.len()
    }

    /// The name of entry `i` (in name order).
    pub(crate) fn name(&self, i: usize) -> &'a OsStr {
        let e = &self.folder.entries[i];
        OsStr::from_bytes(&self.cache.index[e.name.0..e.name.1])
    }

    /// The record of `name` as cached, if the file in `dir` still has the stamp it was cached
    /// with.
    pub(crate) fn hit(&self, dir: &File, name: &OsStr) -> Option<Hit> {
        let idx = &self.cache.index;
        let key = name.as_bytes();
        let i = self
            .folder
            .entries
            .binary_search_by(|e| idx[e.name.0..e.name.1].cmp(key))
            .ok()?;
        self.hit_at(dir, i)
    }

    /// [`CachedFolder::hit`] of entry `i`.
    pub(crate) fn hit_at(&self, dir: &File, i: usize) -> Option<Hit> {
        let e = self.folder.entries.get(i)?;
        (Stamp::at(dir, self.name(i)).ok()? == e.stamp).then_some(Hit {
            at: e.at,
            len: e.len,
            kind: e.kind,
            crc: e.crc,
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
        let (index_at, index_len, total, crc) = (word(8), word(16), word(24), word(32));
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
        // The index names the files a load trusts unread (a folder's listing): a byte of it
        // damaged would name a file that is not there.
        if u64::from(crc32fast::hash(&index)) != crc {
            return Err(CacheError::Format("its index is damaged"));
        }
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
/// entry's record inside the data part (before `data_end`, where the index starts), one after
/// the other.
fn parse_index(b: &[u8], data_end: u64) -> Result<Vec<Folder>, CacheError> {
    let mut c = Cursor { b, at: 0 };
    let folders_n = c.word()?;
    let mut folders: Vec<Folder> = Vec::new();
    let mut next_data = HEADER as u64;
    for _ in 0..folders_n {
        let name = c.name()?;
        let whole = c.word()?;
        let listing_stamp = c.stamp()?;
        let listing = match whole {
            0 => None,
            1 => Some(listing_stamp),
            _ => {
                return Err(CacheError::Format(
                    "a folder's listing is neither kept nor not",
                ))
            }
        };
        let n = c.word()?;
        let mut entries: Vec<Entry> = Vec::new();
        for _ in 0..n {
            let ename = c.name()?;
            let stamp = c.stamp()?;
            let kind = match c.word()? {
                0 => Kind::Json,
                1 => Kind::Binary,
                _ => return Err(CacheError::Format("an entry of an unknown kind")),
            };
            let len = c.word()?;
            let crc = u32::try_from(c.word()?)
                .map_err(|_| CacheError::Format("an entry's checksum is too large"))?;
            let end = next_data
                .checked_add(len)
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
                len,
                kind,
                crc,
            });
            next_data = end;
        }
        if folders
            .last()
            .is_some_and(|p| b[p.name.0..p.name.1] >= b[name.0..name.1])
        {
            return Err(CacheError::Format("its folders are out of order"));
        }
        folders.push(Folder {
            name,
            listing,
            entries,
        });
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
    fn stamp(&mut self) -> Result<Stamp, CacheError> {
        let mut w = [0u64; 6];
        for x in w.iter_mut() {
            *x = self.word()?;
        }
        Ok(Stamp::from_words(w))
    }
}

/// What a load saw of the cache, for the runtime to decide on a [`rebuild`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// Files the cache held.
    pub entries: usize,
    /// Records that loaded from it.
    pub used: usize,
    /// Folders whose listing came from it (unchanged since it was built).
    pub listings: usize,
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

pub(super) mod binary;
mod build;

#[cfg(test)]
pub(crate) use build::rebuild_as_of;
pub use build::{rebuild, Rebuilt};

#[cfg(test)]
mod tests;
