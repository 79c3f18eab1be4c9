//! Store tests on real files in temp dirs.

use super::*;
use crate::model::{Status, Timestamp, WorkspaceKind};
use std::path::PathBuf;

pub(crate) fn record(cwd: &str) -> AgentRecord {
    let now = Timestamp::from_millis(1_700_000_000_000);
    serde_json::from_value(serde_json::json!({
        "id": AgentId::new().to_string(),
        "provider": "shell",
        "cwd": cwd,
        "title": "t",
        "lastStatus": "idle",
        "createdAt": now.to_string(),
        "updatedAt": now.to_string(),
    }))
    .unwrap()
}

fn write(layout: &Layout, r: &AgentRecord) -> PathBuf {
    let p = layout.record_path(&r.cwd, r.id);
    atomic::write_atomic(&p, &encode_record(r).unwrap()).unwrap();
    p
}

#[test]
fn loads_records_and_quarantines_what_it_cannot_read() {
    let d = tempfile::tempdir().unwrap();
    let l = Layout::new(d.path());
    let good = record("/home/me/src/app");
    let gp = write(&l, &good);
    assert!(gp.ends_with(format!("agents/home-me-src-app/{}.json", good.id)));
    // Corrupt JSON, a wrong id, a record whose file name disagrees, and a leftover temp file.
    let dir = l.agents_dir().join("home-me-src-app");
    let bad1 = dir.join(format!("{}.json", AgentId::new()));
    fs::write(&bad1, b"{\"id\": \"trunc").unwrap();
    let bad2 = dir.join(format!("{}.json", AgentId::new()));
    fs::write(&bad2, b"{\"id\": \"../../x\"}").unwrap();
    let other = record("/home/me/src/app");
    let bad3 = dir.join(format!("{}.json", AgentId::new()));
    fs::write(&bad3, encode_record(&other).unwrap()).unwrap();
    let tmp = dir.join(format!("{}leftover", atomic::TEMP_PREFIX));
    fs::write(&tmp, b"half").unwrap();

    let loaded = load_agents(&l).unwrap();
    assert_eq!(loaded.records.len(), 1);
    assert_eq!(*loaded.records[0].record, good);
    assert_eq!(loaded.records[0].path(&l), gp);
    assert_eq!(
        loaded.records[0].stray_path, None,
        "where record_path puts it"
    );
    assert_eq!(loaded.quarantined.len(), 3);
    for q in &loaded.quarantined {
        assert!(Path::new(&q.to).exists(), "moved aside, not deleted");
        assert!(!Path::new(&q.from).exists());
        assert!(q.to.starts_with(l.quarantine_dir().to_str().unwrap()));
    }
    assert!(loaded
        .quarantined
        .iter()
        .any(|q| q.reason.contains("does not match")));
    assert!(!tmp.exists(), "temp leftovers are removed");
}

#[test]
fn a_damaged_registry_is_copied_to_quarantine_and_its_good_entries_kept() {
    let d = tempfile::tempdir().unwrap();
    let l = Layout::new(d.path());
    let now = Timestamp::from_millis(0);
    let w = WorkspaceRecord::new(
        "w1".parse().unwrap(),
        "p1".parse().unwrap(),
        "/src".into(),
        WorkspaceKind::Directory,
        "src".into(),
        now,
    );
    let mut v = serde_json::json!({"workspaces": [w, {"workspaceId": "../bad"}]});
    v["unknown"] = serde_json::json!(1);
    atomic::write_atomic(&l.workspaces_path(), &serde_json::to_vec(&v).unwrap()).unwrap();
    fs::write(l.projects_path(), b"not json").unwrap();
    let reg = load_registry(&l);
    assert_eq!(reg.workspaces, vec![w]);
    assert!(reg.projects.is_empty());
    assert_eq!(reg.quarantined.len(), 2);
    assert!(reg.quarantined[0].reason.contains("workspaces[1]"));
    assert!(l.projects_path().exists(), "never silently removed");
    for q in &reg.quarantined {
        assert!(Path::new(&q.to).exists());
    }
    // A bare array (older format) reads too.
    fs::write(l.projects_path(), b"[]").unwrap();
    assert!(load_registry(&l).quarantined.len() == 1);
}

#[test]
fn inboxes_round_trip_and_damaged_ones_are_quarantined() {
    let d = tempfile::tempdir().unwrap();
    let l = Layout::new(d.path());
    let parent = AgentId::new();
    let n = Notice::new(
        "arm-1",
        AgentId::new(),
        "kid",
        crate::model::NoticeOutcome::Completed,
        None,
        Some("ok"),
        Timestamp::from_millis(0),
    );
    atomic::write_atomic(
        &l.inbox_path(parent),
        &encode_inbox(std::slice::from_ref(&n)).unwrap(),
    )
    .unwrap();
    fs::write(l.inbox_dir().join(format!("{}.json", AgentId::new())), b"{").unwrap();
    let (inboxes, q) = load_inboxes(&l);
    assert_eq!(inboxes, vec![(parent, vec![n])]);
    assert_eq!(q.len(), 1);
}

#[test]
fn ten_thousand_records_with_some_corrupt_all_accounted_for() {
    let d = tempfile::tempdir().unwrap();
    let l = Layout::new(d.path());
    let mut ids = std::collections::HashSet::new();
    for i in 0..10_000 {
        let r = record(&format!("/src/p{}", i % 50));
        ids.insert(r.id);
        let p = l.record_path(&r.cwd, r.id);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        if i % 97 == 0 {
            fs::write(&p, b"{ corrupt").unwrap();
        } else {
            fs::write(&p, encode_record(&r).unwrap()).unwrap();
        }
    }
    let loaded = load_agents(&l).unwrap();
    let corrupt = (0..10_000).filter(|i| i % 97 == 0).count();
    assert_eq!(loaded.quarantined.len(), corrupt);
    assert_eq!(loaded.records.len(), 10_000 - corrupt);
    assert!(loaded.records.iter().all(|r| ids.contains(&r.record.id)));
    assert!(loaded
        .records
        .iter()
        .all(|r| r.record.last_status == Status::Idle));
}

#[test]
fn an_unreadable_registry_is_moved_aside_whole_and_reported() {
    for key in ["workspaces", "projects"] {
        let d = tempfile::tempdir().unwrap();
        let l = Layout::new(d.path());
        let path = if key == "workspaces" {
            l.workspaces_path()
        } else {
            l.projects_path()
        };
        // A directory where the file should be: reading it fails (even as root), and a later
        // rename of a new registry over it would have to replace it.
        fs::create_dir_all(path.join("inside")).unwrap();
        fs::write(path.join("inside/keep.txt"), b"mine").unwrap();
        let reg = load_registry(&l);
        assert!(reg.problems.is_empty(), "{:?}", reg.problems);
        assert_eq!(reg.quarantined.len(), 1, "{key}");
        let q = &reg.quarantined[0];
        assert!(q.reason.starts_with("unreadable"), "{}", q.reason);
        assert_eq!(q.from, path.display().to_string());
        assert!(!path.exists(), "{key}: the way is clear for a new registry");
        assert_eq!(
            fs::read(Path::new(&q.to).join("inside/keep.txt")).unwrap(),
            b"mine"
        );
        // Each file is set aside under its own name.
        assert!(q.to.ends_with(&format!("projects_{key}.json")), "{}", q.to);
    }
}

#[test]
fn quarantine_names_never_collide() {
    let d = tempfile::tempdir().unwrap();
    let l = Layout::new(d.path());
    let p = l.projects_path();
    let mut seen = std::collections::HashSet::new();
    for i in 0..5 {
        atomic::write_atomic(&p, format!("{i}").as_bytes()).unwrap();
        let q = quarantine::quarantine_copy(&l, &p, "test").unwrap();
        assert!(seen.insert(q.to.clone()), "{} reused", q.to);
        assert_eq!(fs::read_to_string(&q.to).unwrap(), format!("{i}"));
    }
}

#[test]
fn a_record_loaded_at_rest_is_written_back_whole_with_its_parts_read_from_its_file() {
    let d = tempfile::tempdir().unwrap();
    let l = Layout::new(d.path());
    let mut with = record("/src/app");
    with.config_mut().system_prompt = Some("You review code. ".repeat(40));
    with.config_mut().model = Some("opus".into());
    with.last_message = Some("All 212 tests pass; the diff is ready. ".repeat(30));
    let mut armed = record("/src/app");
    armed.last_message = Some("cut off here".into());
    armed.notify_arm = Some(Box::new(crate::model::NotifyArm::new(with.id)));
    let without = record("/src/app");
    let (pw, po) = (write(&l, &with), write(&l, &without));
    write(&l, &armed);
    let bytes = fs::read(&pw).unwrap();

    let loaded = load_agents_at_rest(&l).unwrap();
    let got = |id| {
        loaded
            .records
            .iter()
            .find(|r| r.record.id == id)
            .map(|r| r.record.clone())
            .unwrap()
    };
    let rest = got(with.id);
    assert_eq!(rest.config.system_prompt, None, "not held in memory");
    assert_eq!(rest.last_message, None, "not held in memory");
    assert!(rest.config.system_prompt_on_disk && rest.last_message_on_disk);
    assert_eq!(rest.config.model.as_deref(), Some("opus"));
    assert_eq!(*got(without.id), without, "nothing to leave: read whole");
    // A finish notice armed: the load may owe its parent that text, so it is kept.
    assert_eq!(*got(armed.id), armed);

    // Written as it is, the parts would be lost: refused, naming the agent.
    let err = encode_record(&rest).unwrap_err().to_string();
    assert!(
        err.contains(&with.id.to_string()) && err.contains("system prompt"),
        "{err}"
    );
    // Written from its file: the same bytes as before, prompt and message included.
    assert_eq!(encode_record_at(&rest, &pw).unwrap(), bytes);
    let mut back = (*rest).clone();
    read_back(&mut back, &pw).unwrap();
    assert_eq!(back, with);
    // A change made at rest is written with the parts read back.
    let mut changed = (*rest).clone();
    changed.title = "renamed".into();
    let written: AgentRecord =
        serde_json::from_slice(&encode_record_at(&changed, &pw).unwrap()).unwrap();
    assert_eq!(written.title, "renamed");
    assert_eq!(written.config.system_prompt, with.config.system_prompt);
    assert_eq!(written.last_message, with.last_message);
    // A new message replaces the one on disk: only the prompt is read back.
    let mut newer = (*rest).clone();
    newer.last_message = Some("new".into());
    newer.last_message_on_disk = false;
    let written: AgentRecord =
        serde_json::from_slice(&encode_record_at(&newer, &pw).unwrap()).unwrap();
    assert_eq!(written.last_message.as_deref(), Some("new"));
    assert_eq!(written.config.system_prompt, with.config.system_prompt);

    // Another agent's file, a missing one or a damaged one is an error, never a guess.
    let err = encode_record_at(&rest, &po).unwrap_err().to_string();
    assert!(err.contains(&without.id.to_string()), "{err}");
    assert!(read_back(&mut (*rest).clone(), &d.path().join("gone.json")).is_err());
    fs::write(&pw, &bytes[..bytes.len() / 2]).unwrap();
    let err = encode_record_at(&rest, &pw).unwrap_err().to_string();
    assert!(err.contains("could not be read back"), "{err}");
}

/// A registry written before workspaces had names (`name` absent) loads whole; a name given
/// since is written and read back; a workspace without one is written without the key.
#[test]
fn a_registry_from_before_workspace_names_loads_and_names_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let l = Layout::new(d.path());
    let old = serde_json::json!({"workspaces": [
        {"workspaceId": "w1", "projectId": "p1", "cwd": "/src/app", "kind": "local_checkout",
         "displayName": "master", "createdAt": "2026-01-02T03:04:05.000Z",
         "updatedAt": "2026-01-02T03:04:05.000Z", "branch": "master"},
        {"workspaceId": "w2", "projectId": "p1", "cwd": "/src/app", "kind": "local_checkout",
         "displayName": "master", "createdAt": "2026-01-03T03:04:05.000Z",
         "updatedAt": "2026-01-03T03:04:05.000Z", "branch": "master"}
    ]});
    atomic::write_atomic(&l.workspaces_path(), &serde_json::to_vec(&old).unwrap()).unwrap();
    let reg = load_registry(&l);
    assert!(reg.quarantined.is_empty(), "{:?}", reg.quarantined);
    assert_eq!(reg.workspaces.len(), 2);
    assert!(reg.workspaces.iter().all(|w| w.name.is_none()));
    assert_eq!(reg.workspaces[0].branch.as_deref(), Some("master"));

    let mut ws = reg.workspaces.clone();
    ws[1].name = Some("docs review".into());
    let bytes = encode_workspaces(ws.iter()).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(json["workspaces"][0].get("name").is_none(), "{json}");
    assert_eq!(json["workspaces"][1]["name"], "docs review");
    atomic::write_atomic(&l.workspaces_path(), &bytes).unwrap();
    assert_eq!(load_registry(&l).workspaces, ws);
}
