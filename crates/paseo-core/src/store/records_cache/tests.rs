//! The cache changes nothing a load gives (records, their paths, quarantine, problems), only
//! where the bytes come from; a file changed in any way since it was cached is read from the
//! file; a cache that cannot be trusted whole is not used at all.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;
use crate::model::{AgentId, AgentRecord, Status, Timestamp};
use crate::store::atomic;
use crate::store::load::load_agents_on;
use crate::store::{encode_record, LoadedAgents};
use std::ffi::OsString;

/// Writes `n` records over three folders (with `bad`, also a file that is not a record and one
/// whose name is not its record's id); returns the records' paths in load order.
fn root(layout: &Layout, n: usize, bad: bool) -> Vec<std::path::PathBuf> {
    let mut paths = Vec::new();
    for i in 0..n {
        let cwd = format!("/src/p{}", i % 3);
        let mut r = AgentRecord::new(
            AgentId::new(),
            "shell".into(),
            cwd.clone(),
            Status::Idle,
            Timestamp::from_millis(1_700_000_000_000 + i as i64),
        );
        r.title = format!("agent {i:04}");
        r.last_message = Some(format!("the answer of agent {i}"));
        r.config_mut().system_prompt = Some(format!("prompt {i}"));
        let path = layout.record_path(&cwd, r.id);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, encode_record(&r).unwrap()).unwrap();
        paths.push(path);
    }
    if !bad {
        paths.sort();
        return paths;
    }
    let folder = layout
        .agents_dir()
        .join(crate::store::cwd_with_dashes("/src/p0"));
    fs::write(
        folder.join(format!("{}.json", AgentId::new())),
        b"{ not a record",
    )
    .unwrap();
    let stray = fs::read(&paths[0]).unwrap();
    fs::write(folder.join(format!("{}.json", AgentId::new())), stray).unwrap();
    paths.sort();
    paths
}

/// What a load gave, comparable across loads of copies of one root: records with their paths
/// (relative to the root), what was set aside and the problems.
fn seen(layout: &Layout, l: &LoadedAgents) -> Vec<String> {
    let home = layout.home.display().to_string();
    let mut out: Vec<String> = l
        .records
        .iter()
        .map(|r| {
            let path = r.path(layout).display().to_string().replace(&home, "");
            format!("{path} {:?}", r.record)
        })
        .collect();
    // Where a file was set aside is named by the time: its origin and reason are compared.
    out.extend(
        l.quarantined
            .iter()
            .map(|q| format!("{} {}", q.from, q.reason).replace(&home, "")),
    );
    out.extend(l.problems.iter().map(|p| p.replace(&home, "")));
    out
}

fn copy_root(from: &Path, to: &Path) {
    let agents = from.join("agents");
    for folder in fs::read_dir(&agents).unwrap() {
        let folder = folder.unwrap().path();
        let dest = to.join("agents").join(folder.file_name().unwrap());
        fs::create_dir_all(&dest).unwrap();
        for f in fs::read_dir(&folder).unwrap() {
            let f = f.unwrap().path();
            fs::copy(&f, dest.join(f.file_name().unwrap())).unwrap();
        }
    }
}

/// Writes a new record titled "new" in the folder of `/src/p1`.
fn write_new(layout: &Layout) {
    let mut new = AgentRecord::new(
        AgentId::new(),
        "shell".into(),
        "/src/p1".into(),
        Status::Idle,
        Timestamp::from_millis(1_800_000_000_000),
    );
    new.title = "new".into();
    let path = layout.record_path(&new.cwd, new.id);
    fs::write(path, encode_record(&new).unwrap()).unwrap();
}

/// A build "later": the files just written count as settled.
fn later() -> SystemTime {
    SystemTime::now() + SETTLE + Duration::from_secs(1)
}

#[test]
fn a_load_from_the_cache_is_the_load_from_the_files() {
    let plain = tempfile::tempdir().unwrap();
    let plain = Layout::new(plain.path());
    root(&plain, 300, true);
    let cached = tempfile::tempdir().unwrap();
    let cached = Layout::new(cached.path());
    copy_root(&plain.home, &cached.home);
    let built = rebuild_as_of(&cached, later()).unwrap();
    assert_eq!((built.cached, built.unsettled), (302, 0));
    // All but the file that is no record in the binary form (the stray copy of a record too:
    // its name is checked when it loads); every folder's listing.
    assert_eq!((built.binary, built.listed), (301, 3));

    for at_rest in [false, true] {
        let a = load_agents_on(&plain, 3, at_rest).unwrap();
        let b = load_agents_on(&cached, 3, at_rest).unwrap();
        assert_eq!(a.cache, CacheUse::default(), "no cache, none used");
        // Every record came from the cache; the two files that are not records did not.
        assert_eq!(
            b.cache,
            CacheUse {
                entries: 302,
                used: 300,
                // Once the bad files are set aside, their folder is listed again.
                listings: if at_rest { 2 } else { 3 },
            }
        );
        // The first load sets the two bad files aside; the second has none.
        assert_eq!(a.quarantined.len(), if at_rest { 0 } else { 2 });
        assert_eq!(a.records.len(), 300);
        assert_eq!(seen(&plain, &a), seen(&cached, &b), "at rest: {at_rest}");
    }
}

#[test]
fn a_file_changed_in_any_way_since_it_was_cached_is_read_from_the_file() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    let paths = root(&layout, 30, false);
    rebuild_as_of(&layout, later()).unwrap();
    // A step of the clock past the stamps' (a coarse tick is a few milliseconds).
    std::thread::sleep(Duration::from_millis(50));
    let title = |p: &Path| {
        AgentRecord::from_json_boxed(&fs::read(p).unwrap())
            .unwrap()
            .title
    };

    // Rewritten as the app does: a new file renamed over the old one.
    let mut r = AgentRecord::from_json_boxed(&fs::read(&paths[0]).unwrap()).unwrap();
    r.title = "renamed over".into();
    crate::store::atomic::write_atomic(&paths[0], &encode_record(&r).unwrap()).unwrap();
    // Edited in place, the same length: only the change time tells.
    let text = fs::read_to_string(&paths[1]).unwrap();
    let was = title(&paths[1]);
    fs::write(&paths[1], text.replace(&was, "agent EDIT")).unwrap();
    assert_eq!(fs::metadata(&paths[1]).unwrap().len() as usize, text.len());
    // Gone, and a new one.
    fs::remove_file(&paths[2]).unwrap();
    write_new(&layout);

    let l = load_agents_on(&layout, 2, true).unwrap();
    let titles: Vec<&str> = l.records.iter().map(|r| r.record.title.as_str()).collect();
    assert!(titles.contains(&"renamed over"));
    assert!(titles.contains(&"agent EDIT"));
    assert!(titles.contains(&"new"));
    assert!(!titles.contains(&was.as_str()));
    assert_eq!(l.records.len(), 30, "29 left and the new one");
    assert_eq!(
        l.cache.used,
        30 - 3,
        "all but the rewritten, the edited and the gone"
    );
    assert_eq!(l.cache.entries, 30);
}

#[test]
fn a_folder_unchanged_since_the_build_keeps_its_listing_and_a_changed_one_is_listed_again() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    root(&layout, 30, false);
    let folder = |cwd: &str| layout.agents_dir().join(crate::store::cwd_with_dashes(cwd));
    // A write a crash cut off, in one folder: that folder's listing is not kept.
    let leftover = folder("/src/p0").join(format!("{}half", atomic::TEMP_PREFIX));
    fs::write(&leftover, b"{").unwrap();
    let built = rebuild_as_of(&layout, later()).unwrap();
    assert_eq!((built.cached, built.listed), (30, 2));
    let l = load_agents_on(&layout, 2, true).unwrap();
    assert_eq!(
        (l.records.len(), l.cache.used, l.cache.listings),
        (30, 30, 2)
    );
    assert!(
        !leftover.exists(),
        "the load still removes what a crash left"
    );

    rebuild_as_of(&layout, later()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    // A record added to one folder and one removed from another: both folders are listed.
    write_new(&layout);
    let gone = fs::read_dir(folder("/src/p2"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    fs::remove_file(&gone).unwrap();
    let l = load_agents_on(&layout, 2, true).unwrap();
    assert_eq!(l.cache.listings, 1);
    assert_eq!((l.records.len(), l.cache.used), (30, 29));
    assert!(l.records.iter().any(|r| r.record.title == "new"));
    assert!(l.problems.is_empty() && l.quarantined.is_empty());
}

#[test]
fn files_written_just_before_a_build_are_left_out_of_it() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    root(&layout, 20, false);
    let built = rebuild(&layout).unwrap();
    assert_eq!((built.cached, built.unsettled), (0, 20));
    let l = load_agents_on(&layout, 2, true).unwrap();
    assert_eq!(
        l.cache,
        CacheUse {
            entries: 0,
            used: 0,
            listings: 0,
        }
    );
    assert_eq!(l.records.len(), 20);
}

#[test]
fn a_cache_that_cannot_be_trusted_whole_is_not_used() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    root(&layout, 40, false);
    rebuild_as_of(&layout, later()).unwrap();
    let good = fs::read(layout.records_cache_path()).unwrap();
    let expected = seen(&layout, &load_agents_on(&layout, 2, false).unwrap());
    let mut bad: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("cut short", good[..good.len() - 1].to_vec()),
        ("header only", good[..HEADER].to_vec()),
        (
            "another format",
            [b"PASEORC\x09".as_slice(), &good[8..]].concat(),
        ),
        ("longer", [good.as_slice(), b"x"].concat()),
    ];
    // Every byte of the index in turn, set to 0xff: a length, an order or a size off.
    let index_at = u64::from_le_bytes(good[8..16].try_into().unwrap()) as usize;
    for i in (index_at..good.len()).step_by(7) {
        let mut b = good.clone();
        b[i] = 0xff;
        bad.push(("an index byte", b));
    }
    for (what, bytes) in bad {
        fs::write(layout.records_cache_path(), &bytes).unwrap();
        let l = load_agents_on(&layout, 2, false).unwrap();
        assert_eq!(seen(&layout, &l), expected, "{what}");
    }
    // A header claiming an index of 1 GiB at the end of a (sparse) file that long: refused
    // before anything is allocated for it.
    let mut b = good[..HEADER].to_vec();
    let total = (1u64 << 30) + HEADER as u64;
    b[8..16].copy_from_slice(&(HEADER as u64).to_le_bytes());
    b[16..24].copy_from_slice(&(1u64 << 30).to_le_bytes());
    b[24..32].copy_from_slice(&total.to_le_bytes());
    fs::write(layout.records_cache_path(), &b).unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(layout.records_cache_path())
        .unwrap()
        .set_len(total)
        .unwrap();
    assert!(matches!(
        RecordsCache::try_open(&layout.records_cache_path()),
        Err(CacheError::Format(m)) if m.contains("larger")
    ));
    let l = load_agents_on(&layout, 2, false).unwrap();
    assert_eq!(seen(&layout, &l), expected, "a huge index");
    // A record's bytes damaged in the cache (not in its file): its first byte, or one in its
    // middle (a binary record read back from those would still be a record, only not the
    // file's). That record is read from its file, the others from the cache.
    for at in [HEADER, HEADER + 43] {
        let mut b = good.clone();
        b[at] ^= 0x01;
        fs::write(layout.records_cache_path(), &b).unwrap();
        let l = load_agents_on(&layout, 2, false).unwrap();
        assert_eq!(seen(&layout, &l), expected, "byte {at}");
        assert_eq!(l.cache.used, 40 - 1, "byte {at}");
    }
}

#[test]
fn the_cache_is_private_and_its_build_leaves_no_temp_file() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    root(&layout, 5, false);
    let dir = layout.records_cache_path().parent().unwrap().to_path_buf();
    atomic::ensure_dir(&dir).unwrap();
    // What a build cut off by the app's end left.
    fs::write(
        dir.join(format!("{}1-records.bin", atomic::TEMP_PREFIX)),
        b"half",
    )
    .unwrap();
    rebuild_as_of(&layout, later()).unwrap();
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![OsString::from("records.bin")]);
    let mode = fs::metadata(layout.records_cache_path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[test]
fn a_cache_is_rebuilt_when_one_file_in_fifty_changed_and_removed_below_its_size() {
    use NextCache::{Keep, Rebuild, Remove};
    // (entries cached, records parsed from it, records loaded, what next, why)
    let cases = [
        (0, 0, 100, Keep, "small, none"),
        (10, 0, 100, Remove, "small, one left over"),
        (0, 0, MIN_RECORDS, Rebuild, "none yet"),
        (9_800, 9_800, 10_000, Keep, "200 read from files"),
        (9_799, 9_799, 10_000, Rebuild, "201 read"),
        (10_200, 10_000, 10_000, Keep, "200 gone"),
        (10_201, 10_000, 10_000, Rebuild, "201 gone"),
    ];
    for (entries, used, records, next, why) in cases {
        let used_ = CacheUse {
            entries,
            used,
            listings: 0,
        };
        assert_eq!(used_.next(records), next, "{why}");
    }
}
