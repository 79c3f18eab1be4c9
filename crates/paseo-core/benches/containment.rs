//! What containment costs an agent's start (SPEC 16): a shell agent created, its first turn
//! (`true`) run and ended, contained against unconfined, in one run, alternating so the
//! machine's load falls on both alike. Prints the medians and their ratio; the target is at
//! most 1.2× or at most 20 ms added. Then one git command the app runs in an agent's tree
//! (`git status` in a small repository): bare, with the guard (hooks and the repository's own
//! drivers off: one `git config` read first), and guarded in the box.
//! `cargo bench -p paseo-core --bench containment`.

use std::time::{Duration, Instant};

// The tests' typed words for the verbs, each a request through the runtime's one door.
#[allow(dead_code)]
#[path = "../tests/support/door.rs"]
mod door;
use door::Door;

use paseo_core::config::Config;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::Caller;
use paseo_core::runtime::{CreateAgent, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};

const ROUNDS: usize = 40;

async fn start_one(h: &Server, ws: &paseo_core::model::WorkspaceId, unconfined: bool) -> Duration {
    let mut req = CreateAgent::new("shell", WorkspaceTarget::existing(ws.clone()));
    req.initial_prompt = Some("true".into());
    req.unconfined = unconfined;
    let t = Instant::now();
    let id = h.create(req).await.expect("create").record.id;
    let r = h.wait(id, Duration::from_secs(30)).await.expect("wait");
    let took = t.elapsed();
    assert!(!r.timed_out, "the first turn ended");
    assert_eq!(
        r.agent.status,
        paseo_core::model::Status::Idle,
        "{:?}",
        r.agent.record.last_error
    );
    h.archive(Caller::User, id).await.expect("archive");
    took
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("tokio");
    rt.block_on(async {
        let home = tempfile::tempdir().expect("tempdir");
        let work = tempfile::tempdir().expect("tempdir");
        let opts = RuntimeOptions::new(
            home.path(),
            ProviderRegistry::from_config(&Config::default()),
        );
        let runtime = Runtime::start(opts, None).await.expect("start");
        let h = runtime.handle();
        let ws = h
            .add_workspace(work.path().display().to_string())
            .await
            .expect("workspace")
            .record
            .workspace_id;
        // Warm-up: the first start pays for what later ones find cached.
        start_one(&h, &ws, false).await;
        start_one(&h, &ws, true).await;
        let (mut boxed, mut free) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            boxed.push(start_one(&h, &ws, false).await);
            free.push(start_one(&h, &ws, true).await);
        }
        let (b, f) = (median(boxed), median(free));
        let ratio = b.as_secs_f64() / f.as_secs_f64();
        let added = b.as_secs_f64() * 1000.0 - f.as_secs_f64() * 1000.0;
        println!(
            "shell agent start to end of first turn, median of {ROUNDS}: contained {:.1} ms, \
             unconfined {:.1} ms: {ratio:.2}x, {added:+.1} ms (target <= 1.2x or <= 20 ms)",
            b.as_secs_f64() * 1000.0,
            f.as_secs_f64() * 1000.0,
        );
        // App git: the box is installed now (the runtime above did it).
        let repo = work.path().join("repo");
        std::fs::create_dir_all(&repo).expect("repo");
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(args)
                .output()
                .expect("git");
            assert!(ok.status.success(), "{ok:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(repo.join("a.txt"), "a\n").expect("write");
        git(&["add", "."]);
        git(&[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "a",
        ]);
        use paseo_core::workspaces::gitcli::Cmd;
        let (mut bare, mut guarded, mut boxed) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = Instant::now();
            git(&["status", "--porcelain"]);
            bare.push(t.elapsed());
            let t = Instant::now();
            Cmd::git(&repo)
                .args(["status", "--porcelain"])
                .unboxed()
                .run()
                .expect("guarded");
            guarded.push(t.elapsed());
            let t = Instant::now();
            Cmd::git(&repo)
                .args(["status", "--porcelain"])
                .run()
                .expect("boxed");
            boxed.push(t.elapsed());
        }
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let (a, g, x) = (median(bare), median(guarded), median(boxed));
        println!(
            "git status in an agent's tree, median of {ROUNDS}: bare {:.1} ms, guarded {:.1} ms \
             ({:.2}x), guarded and boxed {:.1} ms ({:.2}x)",
            ms(a),
            ms(g),
            ms(g) / ms(a),
            ms(x),
            ms(x) / ms(a),
        );
        runtime.shutdown().await;
    });
}
