//! 50,000 records load completely with bounded concurrency: under a file-descriptor limit of
//! 64 the loader neither runs out of descriptors nor drops a record.

use std::collections::HashSet;

use paseo_core::model::{AgentId, AgentRecord, Timestamp};
use paseo_core::store::{self, Layout};

#[test]
fn fifty_thousand_records_load_under_a_small_fd_limit() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    let now = Timestamp::from_millis(1_700_000_000_000);
    // Written by four threads: creating the files is most of this test's time.
    let ids: HashSet<AgentId> = std::thread::scope(|s| {
        let parts: Vec<_> = (0..4)
            .map(|t| {
                let layout = &layout;
                s.spawn(move || {
                    let mut ids = Vec::new();
                    for i in (t..50_000).step_by(4) {
                        let rec: AgentRecord = serde_json::from_value(serde_json::json!({
                            "id": AgentId::new().to_string(), "provider": "shell",
                            "cwd": format!("/src/p{}", i % 100), "title": format!("agent {i}"),
                            "lastStatus": "closed", "createdAt": now.to_string(),
                            "updatedAt": now.to_string(),
                        }))
                        .unwrap();
                        let p = layout.record_path(&rec.cwd, rec.id);
                        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                        std::fs::write(&p, store::encode_record(&rec).unwrap()).unwrap();
                        ids.push(rec.id);
                    }
                    ids
                })
            })
            .collect();
        parts.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    // Only this test runs in this binary, so lowering the limit affects nothing else.
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut old), 0);
        let low = libc::rlimit {
            rlim_cur: 64,
            rlim_max: old.rlim_max,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &low), 0);
    }
    let loaded = store::load_agents(&layout);
    unsafe {
        libc::setrlimit(libc::RLIMIT_NOFILE, &old);
    }
    let loaded = loaded.unwrap();
    assert!(
        loaded.quarantined.is_empty(),
        "{:?}",
        &loaded.quarantined[..1]
    );
    assert!(loaded.problems.is_empty());
    assert_eq!(loaded.records.len(), 50_000);
    let got: HashSet<AgentId> = loaded.records.iter().map(|r| r.record.id).collect();
    assert_eq!(got, ids);
}
