//! Load and its repairs (SPEC 1).

use super::*;
use crate::model::NoticeOutcome;

#[test]
fn load_normalizes_repairs_and_reports() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = f.armed(Some(parent), parent); // running, armed
    let cyc_a = f.idle(None, "w1");
    let cyc_b = f.idle(Some(cyc_a), "w1");
    let orphan_parent = f.idle(None, "w1");
    let orphan = f.idle(Some(orphan_parent), "w1");

    let mut records = f.records();
    for r in records.iter_mut() {
        if r.id == cyc_a {
            r.set_parent(Some(cyc_b));
        }
        if r.id == orphan_parent {
            // A crash between archiving the parent and its child.
            r.archived_at = Some(Timestamp::from_millis(5));
            r.archive_batch_id = Some("b1".parse().unwrap());
        }
    }
    let (mut e2, report) = f.reload(records);
    assert!(report.problems.iter().any(|p| p.contains("cycle")));
    assert!(e2.agent(orphan).unwrap().record.is_archived());
    assert_eq!(
        e2.agent(orphan).unwrap().record.archive_batch_id,
        Some("b1".parse().unwrap())
    );
    let k = &e2.agent(kid).unwrap().record;
    assert_eq!(k.last_status, Status::Error);
    assert_eq!(k.last_error.as_deref(), Some(INTERRUPTED));
    assert_eq!(e2.agent(parent).unwrap().status(), Status::Closed);
    // The armed turn's notice survives the crash and is queued for the parent.
    let q = e2.inbox(parent).unwrap();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].outcome, NoticeOutcome::Failed);
    e2.deliver_pending();
    assert_eq!(e2.agent(parent).unwrap().status(), Status::Initializing);
    assert_eq!(e2.activity_snapshot(), e2.recompute_activity());
    assert_eq!(e2.subtrees_snapshot(), e2.recompute_subtrees());
}

/// SPEC 1, 11: a parent label naming no loaded agent makes a root, reported in one line, and
/// the label itself is kept for when the parent's record comes back.
#[test]
fn a_parent_label_naming_no_agent_makes_a_reported_root() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kids: Vec<AgentId> = (0..5).map(|_| f.idle(Some(parent), "w1")).collect();
    let records: Vec<AgentRecord> =
        f.e.agents()
            .filter(|a| a.record.id != parent)
            .map(|a| AgentRecord::clone(&a.record))
            .collect();
    let (e2, report) = f.reload(records);
    let lines: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.contains("does not exist"))
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", report.problems);
    assert!(lines[0].starts_with("5 agent(s)"), "{}", lines[0]);
    for k in kids {
        let a = e2.agent(k).unwrap();
        assert_eq!(e2.existing_parent(a), None);
        assert_eq!(a.root(), k);
        assert_eq!(
            a.record.parent_agent_id(),
            Some(parent),
            "the label is kept"
        );
    }
    // A parent that exists is shown, archived or not.
    let kid = f.idle(Some(parent), "w1");
    assert_eq!(f.e.existing_parent(f.e.agent(kid).unwrap()), Some(parent));
}

/// Load repairs are one line per kind with a count and the first few ids, never one
/// line per record (a crash under a large archive can leave thousands).
#[test]
fn repairs_are_summarized_one_line_per_kind() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kids: Vec<AgentId> = (0..40).map(|_| f.idle(Some(parent), "w1")).collect();
    let mut records = f.records();
    for r in records.iter_mut() {
        if r.id == parent {
            r.archived_at = Some(Timestamp::from_millis(5));
            r.archive_batch_id = Some("b1".parse().unwrap());
        }
    }
    let (e2, report) = f.reload(records);
    let lines: Vec<&String> = report
        .problems
        .iter()
        .filter(|p| p.contains("unarchived"))
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", report.problems);
    assert!(
        lines[0].starts_with("40 agent(s) were left unarchived"),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[0].matches(", ").count(),
        3,
        "three ids and …: {}",
        lines[0]
    );
    assert!(kids
        .iter()
        .all(|k| e2.agent(*k).unwrap().record.is_archived()));
}

#[test]
fn records_loaded_share_one_copy_of_each_workspace_and_batch_id() {
    let mut f = Fx::new();
    let a = f.idle(None, "w1");
    let b = f.idle(None, "w1");
    let mut records = f.records();
    // As read from disk: every record holds its own copy of each id.
    for r in records.iter_mut() {
        r.workspace_id = Some("w1".parse().unwrap());
        r.archived_at = Some(Timestamp::from_millis(5));
        r.archive_batch_id = Some("b1".parse().unwrap());
    }
    let (e2, _) = f.reload(records);
    let (ra, rb) = (&e2.agent(a).unwrap().record, &e2.agent(b).unwrap().record);
    let at = |id: Option<&str>| id.map(str::as_ptr);
    let kept = e2
        .workspaces()
        .find(|w| w.workspace_id.as_str() == "w1")
        .unwrap();
    assert_eq!(
        at(ra.workspace_id.as_ref().map(|w| w.as_str())),
        Some(kept.workspace_id.as_str().as_ptr()),
        "the registry's copy"
    );
    assert_eq!(
        at(ra.workspace_id.as_ref().map(|w| w.as_str())),
        at(rb.workspace_id.as_ref().map(|w| w.as_str()))
    );
    assert_eq!(
        at(ra.archive_batch_id.as_ref().map(|w| w.as_str())),
        at(rb.archive_batch_id.as_ref().map(|w| w.as_str()))
    );
}
