//! The writer's tests: order, coalescing, failures and retries, held paths.
use super::*;

#[tokio::test]
async fn writes_land_in_order_and_bursts_coalesce() {
    let d = tempfile::tempdir().unwrap();
    let w = Writer::new(4);
    let p = d.path().join("x/a.json");
    let mut last = None;
    for i in 0..500 {
        last = Some(w.submit(p.clone(), format!("{i}").into_bytes()));
    }
    w.wait(&last.unwrap()).await.unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "499");
    assert!(
        w.writes() < 500,
        "a burst was coalesced ({} writes)",
        w.writes()
    );
    let t = w.remove(p.clone());
    w.wait(&t).await.unwrap();
    assert!(!p.exists());
}

#[tokio::test]
async fn many_paths_all_become_durable() {
    let d = tempfile::tempdir().unwrap();
    let w = Writer::new(4);
    let tickets: Vec<_> = (0..300)
        .map(|i| w.submit(d.path().join(format!("f{i}.json")), vec![b'x'; 10]))
        .collect();
    w.wait_all(&tickets).await.unwrap();
    w.flush().await;
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 300);
}

#[tokio::test]
async fn a_failing_file_is_reported_once_and_retried_until_it_lands() {
    let d = tempfile::tempdir().unwrap();
    let id = AgentId::new();
    let dir = d.path().join("agents/src-app");
    let p = dir.join(format!("{id}.json"));
    std::fs::create_dir_all(d.path().join("agents")).unwrap();
    std::fs::write(&dir, b"in the way").unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let w = Writer::with_failures(2, Some(tx));
    for i in 0..3 {
        let t = w.submit(p.clone(), format!("v{i}").into_bytes());
        assert!(w.wait(&t).await.is_err());
    }
    let f = rx.recv().await.unwrap();
    assert_eq!(f.agent, Some(id));
    assert!(f.message.contains("agent's record"), "{}", f.message);
    // Space is back: the latest content lands on its own, with nothing submitted.
    std::fs::remove_file(&dir).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read(&p).ok().as_deref() != Some(b"v2".as_slice()) {
        assert!(
            Instant::now() < deadline,
            "the failed write was not retried"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(rx.try_recv().is_err(), "reported once");
}

#[tokio::test]
async fn a_failed_write_is_reported() {
    let d = tempfile::tempdir().unwrap();
    let blocker = d.path().join("file");
    std::fs::write(&blocker, b"").unwrap();
    let w = Writer::new(1);
    let t = w.submit(blocker.join("under-a-file.json"), b"x".to_vec());
    let err = w.wait(&t).await.unwrap_err();
    assert!(matches!(err, WriteError::Io { .. }), "{err}");
}

/// A held path lands only once its gates are open (another file's write durable, a mark
/// set), and writes submitted to it later inherit the hold.
#[tokio::test]
async fn a_held_path_lands_only_after_its_gates() {
    let d = tempfile::tempdir().unwrap();
    let w = Writer::new(4);
    let inbox = d.path().join("inbox.json");
    let record = d.path().join("record.json");
    // The inbox cannot land yet: its own gate is a mark.
    let mark = Mark::new();
    w.hold(inbox.clone(), vec![Gate::Mark(mark.clone())]);
    let t_inbox = w.submit(inbox.clone(), b"inbox".to_vec());
    w.hold(record.clone(), vec![Gate::Write(t_inbox.clone())]);
    w.submit(record.clone(), b"v1".to_vec());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t2 = w.submit(record.clone(), b"v2".to_vec());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !inbox.exists() && !record.exists(),
        "nothing lands before the mark"
    );
    mark.set();
    w.wait(&t2).await.unwrap();
    assert_eq!(std::fs::read(&record).unwrap(), b"v2");
    assert_eq!(std::fs::read(&inbox).unwrap(), b"inbox");
    // Once open, the path is free again.
    let t3 = w.submit(record.clone(), b"v3".to_vec());
    w.wait(&t3).await.unwrap();
}
