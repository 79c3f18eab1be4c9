//! Writing the cache: off the start's path, at idle priority, into a temp file that is synced
//! and renamed over the old one, so a crash leaves the old cache or the new.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::SystemTime;

use super::{binary, CacheError, Kind, Stamp, HEADER, MAGIC};
use crate::store::{atomic, load, private, Layout};

/// What a [`rebuild`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rebuilt {
    /// Files cached.
    pub cached: usize,
    /// Files left out: changed too recently to be trusted, or changing while read.
    pub unsettled: usize,
    /// Of the files cached, those kept in the binary form (the others as their JSON).
    pub binary: usize,
    /// Folders whose listing the cache holds whole (a load reads it instead of the folder's).
    pub listed: usize,
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

fn put(index: &mut Vec<u8>, x: u64) {
    index.extend_from_slice(&x.to_le_bytes());
}

fn put_name(index: &mut Vec<u8>, name: &[u8]) {
    put(index, name.len() as u64);
    index.extend_from_slice(name);
}

fn put_stamp(index: &mut Vec<u8>, s: &Stamp) {
    for w in s.words() {
        put(index, w);
    }
}

fn write_cache(layout: &Layout, tmp: &Path, built: (i64, i64)) -> Result<Rebuilt, CacheError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(private::FILE_MODE)
        .open(tmp)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(&[0u8; HEADER])?;
    let mut done = Rebuilt::default();
    let mut at = HEADER as u64;
    // Each folder's part of the index: its name, its listing's stamp if it is kept whole, and
    // its entries.
    let mut folders: Vec<(OsString, Option<Stamp>, Vec<u8>, u64)> = Vec::new();
    let (mut buf, mut packed) = (Vec::new(), Vec::new());
    // The folders and files a load reads, as it lists them (the runtime's temp files left be).
    for path in load::list_folders(layout)? {
        let Some(folder) = path.file_name().map(OsStr::to_os_string) else {
            continue;
        };
        let Ok(dir) = File::open(&path) else { continue };
        // Taken before the listing: a file added, removed or renamed in the folder from here on
        // changes the folder's times, and the load then lists it again.
        let listing_stamp = Stamp::of_file(&dir).ok();
        let listing = load::record_names(&path, false);
        let mut whole = listing.leftovers == 0;
        let mut entries = Vec::new();
        let mut count = 0u64;
        for name in listing.names {
            let Some(stamp) = read_settled(&dir, &name, built, &mut buf) else {
                done.unsettled += 1;
                whole = false;
                continue;
            };
            let (kind, bytes) = match binary::encode_checked(&buf, &mut packed) {
                Some(()) => (Kind::Binary, &packed),
                None => (Kind::Json, &buf),
            };
            out.write_all(bytes)?;
            at += bytes.len() as u64;
            put_name(&mut entries, name.as_bytes());
            put_stamp(&mut entries, &stamp);
            put(&mut entries, kind as u64);
            put(&mut entries, bytes.len() as u64);
            put(&mut entries, u64::from(crc32fast::hash(bytes)));
            count += 1;
            done.cached += 1;
            done.binary += usize::from(kind == Kind::Binary);
        }
        let listing_stamp = listing_stamp.filter(|s| whole && s.settled_before(built));
        done.listed += usize::from(listing_stamp.is_some());
        if count > 0 || listing_stamp.is_some() {
            folders.push((folder, listing_stamp, entries, count));
        }
    }
    let mut index: Vec<u8> = Vec::new();
    put(&mut index, folders.len() as u64);
    for (name, listing_stamp, entries, count) in folders {
        put_name(&mut index, &name.into_vec());
        put(&mut index, u64::from(listing_stamp.is_some()));
        put_stamp(&mut index, &listing_stamp.unwrap_or(Stamp::NONE));
        put(&mut index, count);
        index.extend_from_slice(&entries);
    }
    out.write_all(&index)?;
    let total = at + index.len() as u64;
    let file = out.into_inner().map_err(|e| e.into_error())?;
    let mut head = Vec::with_capacity(HEADER);
    head.extend_from_slice(MAGIC);
    let crc = u64::from(crc32fast::hash(&index));
    for w in [at, index.len() as u64, total, crc] {
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
