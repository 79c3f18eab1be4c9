//! The loader's result does not depend on its threads: a data root with everything a crash or
//! bad data leaves (unreadable files, duplicates, cycles, dangling and bad parent labels,
//! cascades left half done, records left running) loads into the same records, the same
//! quarantine and the same engine state with eight threads as with one (the plain sequential
//! loop), run after run.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use super::*;
use crate::engine::Engine;
use crate::model::{AttentionReason, NotifyArm, Status, Timestamp, PARENT_LABEL};
use crate::store::encode_record;

const T0: i64 = 1_700_000_000_000;

fn rec(cwd: &str, i: usize, parent: Option<AgentId>) -> AgentRecord {
    let mut r = AgentRecord::new(
        AgentId::new(),
        "shell".into(),
        cwd.into(),
        Status::Closed,
        // Some agents share a creation time: ties are broken by id.
        Timestamp::from_millis(T0 + (i / 3) as i64),
    );
    r.title = format!("agent {i}");
    r.workspace_id = Some(format!("ws-{}", i % 7).parse().unwrap());
    r.set_parent(parent);
    r
}

fn put(layout: &Layout, folder: &str, r: &AgentRecord) {
    let dir = layout.agents_dir().join(folder);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join(format!("{}.json", r.id)),
        encode_record(r).unwrap(),
    )
    .unwrap();
}

/// Writes the messy data root; returns the id whose two copies tie on `updatedAt`.
fn messy_root(layout: &Layout) -> AgentId {
    let mut all: Vec<AgentRecord> = Vec::new();
    // 40 small folders and one big one (many turns of work for the threads).
    for i in 0..2_700 {
        let folder = if i < 1_200 { i % 40 } else { 40 };
        let parent = (i % 4 != 0 && !all.is_empty()).then(|| all[(i * 7) % all.len()].id);
        let mut r = rec(&format!("/src/p{folder}"), i, parent);
        match i % 11 {
            1 => r.last_status = Status::Running,
            2 => r.last_status = Status::Idle,
            3 => {
                r.requires_attention = true;
                r.attention_reason = Some(AttentionReason::Permission);
            }
            4 if parent.is_some() => r.notify_arm = Some(Box::new(NotifyArm::new(parent.unwrap()))),
            _ => {}
        }
        all.push(r);
    }
    // An archived agent whose children a crash left unarchived.
    all[100].archived_at = Some(Timestamp::from_millis(T0 + 9_000));
    all[100].archive_batch_id = Some("batch-1".parse().unwrap());
    for j in [500, 501, 502] {
        let parent = all[100].id;
        all[j].set_parent(Some(parent));
    }
    // A cycle of two, a self-link, a dangling parent and a label that is no id.
    let (a, b) = (all[10].id, all[11].id);
    all[10].set_parent(Some(b));
    all[11].set_parent(Some(a));
    let me = all[12].id;
    all[12].set_parent(Some(me));
    all[13].set_parent(Some(AgentId::new()));
    all[14]
        .labels
        .insert(PARENT_LABEL.to_string(), "not-an-id".into());
    for (i, r) in all.iter().enumerate() {
        let folder = if i < 1_200 { i % 40 } else { 40 };
        put(layout, &format!("src-p{folder}"), r);
    }
    // Duplicates in other folders: one newer copy, and one that ties.
    let mut newer = all[20].clone();
    newer.updated_at = Timestamp::from_millis(T0 + 50_000);
    newer.title = "newer copy".into();
    put(layout, "a-dup", &newer);
    let mut tie = all[30].clone();
    tie.title = "tied copy".into();
    put(layout, "zz-dup", &tie);
    // What cannot be read, and a write a crash cut off.
    let dir = layout.agents_dir().join("src-p3");
    fs::write(
        dir.join(format!("{}.json", AgentId::new())),
        b"{\"id\": \"tr",
    )
    .unwrap();
    fs::write(dir.join(format!("{}.json", AgentId::new())), b"[]").unwrap();
    let stray = rec("/src/p3", 9_999, None);
    fs::write(
        dir.join(format!("{}.json", AgentId::new())),
        encode_record(&stray).unwrap(),
    )
    .unwrap();
    fs::write(dir.join(format!("{}half", atomic::TEMP_PREFIX)), b"{").unwrap();
    all[30].id
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Everything a load produced, with paths relative to the data root (each run has its own).
#[derive(Debug, PartialEq)]
struct Loaded {
    records: Vec<(String, AgentRecord)>,
    quarantined: Vec<(String, String)>,
    problems: Vec<String>,
    engine: EngineState,
}

#[derive(Debug, PartialEq)]
struct EngineState {
    agents: usize,
    normalized: Vec<AgentId>,
    problems: Vec<String>,
    duplicates: Vec<AgentId>,
    changed: Vec<AgentId>,
    /// Per agent: record, root, contribution, track.
    fleet: BTreeMap<AgentId, (AgentRecord, AgentId, Option<String>, Vec<AgentId>)>,
    activity: BTreeMap<String, [u32; crate::model::Bucket::COUNT]>,
}

fn load_with(source: &Path, threads: usize) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(source, dir.path());
    let layout = Layout::new(dir.path());
    let home = dir.path().display().to_string();
    let rel = |p: &str| p.strip_prefix(&home).unwrap_or(p).to_string();
    let loaded = load_agents_on(&layout, threads, false).unwrap();
    let records: Vec<(String, AgentRecord)> = loaded
        .records
        .iter()
        .map(|r| {
            let path = r.path(&layout).display().to_string();
            (rel(&path), AgentRecord::clone(&r.record))
        })
        .collect();
    let quarantined = loaded
        .quarantined
        .iter()
        .map(|q| (rel(&q.from), q.reason.clone()))
        .collect();

    let mut e = Engine::new();
    e.set_clock(Some(Timestamp::from_millis(T0 + 100_000)));
    let report = e.load(
        loaded.records.into_iter().map(|r| r.record),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        &|_| true,
    );
    // The bulk indexes agree with the ones computed from scratch.
    assert_eq!(e.activity_snapshot(), e.recompute_activity());
    assert_eq!(e.subtrees_snapshot(), e.recompute_subtrees());
    let mut changed: Vec<AgentId> = e.take_changed_agents().into_iter().collect();
    changed.sort_unstable();
    let fleet = e
        .agents()
        .map(|a| {
            let id = a.record.id;
            let contribution = a.contribution().map(|(w, b)| format!("{w}:{b:?}"));
            (
                id,
                (
                    AgentRecord::clone(&a.record),
                    a.root(),
                    contribution,
                    e.track(id),
                ),
            )
        })
        .collect();
    let activity = e
        .activity_snapshot()
        .into_iter()
        .map(|(w, c)| (w.to_string(), c))
        .collect();
    Loaded {
        records,
        quarantined,
        problems: loaded.problems,
        engine: EngineState {
            agents: report.agents,
            normalized: report.normalized,
            problems: report.problems,
            duplicates: report.duplicates,
            changed,
            fleet,
            activity,
        },
    }
}

#[test]
fn a_messy_root_loads_the_same_on_eight_threads_as_on_one() {
    let source = tempfile::tempdir().unwrap();
    let tied = messy_root(&Layout::new(source.path()));
    let sequential = load_with(source.path(), 1);

    // What the sequential loop finds: every file accounted for, in path order.
    assert_eq!(sequential.records.len(), 2_702);
    assert_eq!(
        sequential.quarantined.len(),
        3,
        "{:?}",
        sequential.quarantined
    );
    let paths: Vec<&String> = sequential.records.iter().map(|(p, _)| p).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "records come in path order");
    let e = &sequential.engine;
    assert_eq!(e.agents, 2_700);
    assert_eq!(e.duplicates.len(), 2);
    // Equal updatedAt: the copy whose path sorts first stays (agents/a-dup before src-p…,
    // src-p… before zz-dup).
    assert_ne!(e.fleet[&tied].0.title, "tied copy");
    assert!(e.fleet.values().any(|a| a.0.title == "newer copy"));
    let lines = e.problems.join("\n");
    for kind in [
        "cycle of parent links",
        "named themselves as their parent",
        "parent label that is no agent id",
        "name a parent that does not exist",
        "left unarchived under an archived parent",
    ] {
        assert!(lines.contains(kind), "no {kind:?} in {lines}");
    }
    assert!(!e.normalized.is_empty() && !e.changed.is_empty());

    for threads in [8, 3, 8] {
        let parallel = load_with(source.path(), threads);
        assert!(
            parallel == sequential,
            "{threads} threads loaded something else than one"
        );
    }
}

/// Records read in one read when they fit (almost all do); one larger than a read, one of
/// exactly its size and one just under it load whole, and a broken one is still quarantined
/// with the parser's reason.
#[test]
fn records_of_any_size_load_whole_and_broken_ones_are_quarantined() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    let mut want = BTreeMap::new();
    let base = rec("/src/big", 0, None);
    let bare = encode_record(&base).unwrap().len();
    for (i, size) in [100, ONE_READ - 1, ONE_READ, ONE_READ + 1, 3 * ONE_READ + 17]
        .into_iter()
        .enumerate()
    {
        let mut r = rec("/src/big", i, None);
        // `"systemPrompt": "…"` inside `"config": {…}` adds this much around the text.
        let around = encode_record(&{
            let mut x = r.clone();
            x.config_mut().system_prompt = Some(String::new());
            x
        })
        .unwrap()
        .len();
        r.config_mut().system_prompt = Some("p".repeat(size.saturating_sub(around.max(bare))));
        let bytes = encode_record(&r).unwrap();
        if size > around {
            assert_eq!(bytes.len(), size, "record {i} is {size} bytes on disk");
        }
        put(&layout, "big", &r);
        want.insert(r.id, r);
    }
    let broken = layout
        .agents_dir()
        .join("big")
        .join(format!("{}.json", AgentId::new()));
    fs::write(&broken, format!("{{\"id\": \"{}", "x".repeat(2 * ONE_READ))).unwrap();
    let loaded = load_agents_on(&layout, 2, false).unwrap();
    let got: BTreeMap<AgentId, AgentRecord> = loaded
        .records
        .into_iter()
        .map(|l| (l.record.id, *l.record))
        .collect();
    assert_eq!(got, want);
    assert_eq!(loaded.quarantined.len(), 1);
    assert!(
        loaded.quarantined[0]
            .reason
            .starts_with("invalid agent record"),
        "{:?}",
        loaded.quarantined[0]
    );
    assert!(!broken.exists());
}

/// Runs `f` on a thread without the capabilities that let root read any file (Linux keeps
/// capabilities per thread; the threads it starts inherit the set), so a file's permission bits
/// deny root as they deny anyone else.
fn without_dac_override<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        s.spawn(|| {
            #[repr(C)]
            struct Header {
                version: u32,
                pid: i32,
            }
            #[repr(C)]
            #[derive(Clone, Copy, Default)]
            struct Data {
                effective: u32,
                permitted: u32,
                inheritable: u32,
            }
            let mut h = Header {
                version: 0x2008_0522,
                pid: 0,
            };
            let mut d = [Data::default(); 2];
            // SAFETY: capget/capset with the v3 header and its two data words, on this thread.
            unsafe {
                assert_eq!(libc::syscall(libc::SYS_capget, &mut h, d.as_mut_ptr()), 0);
                // CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2).
                d[0].effective &= !0b110;
                assert_eq!(libc::syscall(libc::SYS_capset, &mut h, d.as_ptr()), 0);
            }
            f()
        })
        .join()
        .unwrap()
    })
}

/// A record that cannot be read (permission denied here) is reported and left where it is,
/// untouched: only a file whose bytes fail to parse is quarantined (SPEC 1).
#[test]
fn an_unreadable_record_is_reported_and_left_in_place() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    let good = rec("/src/app", 0, None);
    put(&layout, "src-app", &good);
    let locked = rec("/src/app", 1, None);
    put(&layout, "src-app", &locked);
    let path = layout.record_path(&locked.cwd, locked.id);
    let bytes = fs::read(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    let loaded = without_dac_override(|| load_agents_on(&layout, 2, false).unwrap());
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let ids: Vec<AgentId> = loaded.records.iter().map(|l| l.record.id).collect();
    assert_eq!(ids, vec![good.id]);
    assert!(loaded.quarantined.is_empty(), "{:?}", loaded.quarantined);
    assert!(!layout.quarantine_dir().exists());
    assert_eq!(fs::read(&path).unwrap(), bytes, "left in place, untouched");
    assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
    let p = &loaded.problems[0];
    assert!(p.contains(&path.display().to_string()), "{p}");
    assert!(
        p.contains("ermission denied") && p.contains("left in place"),
        "{p}"
    );
    // Once it can be read again it loads like any other.
    let again = load_agents_on(&layout, 2, false).unwrap();
    assert_eq!(again.records.len(), 2);
}

/// The access time of `path`, in nanoseconds.
fn atime(path: &Path) -> i128 {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).unwrap();
    i128::from(m.atime()) * 1_000_000_000 + i128::from(m.atime_nsec())
}

/// Sets `path`'s access time a day before its modification (what relatime updates on a read).
fn age_atime(path: &Path) {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).unwrap();
    let times = [
        libc::timespec {
            tv_sec: (m.mtime() - 86_400) as libc::time_t,
            tv_nsec: 0,
        },
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
    ];
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and two timespecs that outlive the call.
    assert_eq!(
        unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) },
        0
    );
}

#[test]
fn loading_leaves_the_records_access_times_alone() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    let r = rec("/src/p0", 0, None);
    put(&layout, "-src-p0", &r);
    let path = layout
        .agents_dir()
        .join("-src-p0")
        .join(format!("{}.json", r.id));
    // Whether this mount updates access times on a read at all (noatime mounts never do).
    age_atime(&path);
    let before = atime(&path);
    fs::read(&path).unwrap();
    if atime(&path) == before {
        eprintln!("this mount never updates access times: nothing to check");
        return;
    }
    age_atime(&path);
    let before = atime(&path);
    let loaded = load_agents_on(&layout, 1, true).unwrap();
    assert_eq!(loaded.records.len(), 1);
    assert_eq!(
        atime(&path),
        before,
        "the load wrote the record's access time"
    );
}
