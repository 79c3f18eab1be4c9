//! Usage and cost (what SPEC 18's budgets count) from the real pinned Claude Code and Codex CLIs,
//! driven by the scripted stand-ins that report the same usage on every reply: what each agent's
//! record sums matches what the stand-ins sent, across two turns, a parent and its (archived)
//! child, and a restart that resumes the sessions in new processes. Shell agents record wall time
//! and exit code instead.

use crate::support;

use std::time::Duration;

use paseo_core::model::{AgentId, Status, Usage, WorkspaceId};
use paseo_core::runtime::{Caller, RuntimeOptions, WaitResult};
use paseo_core::server::{Runtime, Server};
use support::anthropic;
use support::cli::{create, Clis};
use support::openai;
use support::Door;

const T: Duration = Duration::from_secs(60);

struct Fixture {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    clis: Clis,
}

impl Fixture {
    async fn new() -> Fixture {
        Fixture {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            clis: Clis::echoing().await,
        }
    }

    async fn start(&self) -> Runtime {
        let rt = Runtime::start(
            RuntimeOptions::new(self.home.path(), self.clis.registry()),
            None,
        )
        .await
        .unwrap();
        rt.handle.deliver_pending().await.unwrap();
        rt
    }
}

/// What `turns` replies of a provider's stand-in add up to: (in, out, cache read, cache write).
fn tokens(provider: &str, turns: u64) -> (u64, u64, u64, u64) {
    match provider {
        "claude" => (
            anthropic::INPUT_TOKENS * turns,
            anthropic::OUTPUT_TOKENS * turns,
            anthropic::CACHE_READ_TOKENS * turns,
            anthropic::CACHE_WRITE_TOKENS * turns,
        ),
        _ => (
            (openai::INPUT_TOKENS - openai::CACHED_TOKENS) * turns,
            openai::OUTPUT_TOKENS * turns,
            openai::CACHED_TOKENS * turns,
            0,
        ),
    }
}

fn of(u: &Usage) -> (u64, u64, u64, u64) {
    (
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
    )
}

fn idle(provider: &str, r: &WaitResult) {
    assert!(!r.timed_out, "{provider} timed out");
    assert_eq!(
        r.agent.status,
        Status::Idle,
        "{provider}: {:?}",
        r.agent.record.last_error
    );
}

async fn turn(h: &Server, provider: &str, id: AgentId, text: &str) -> WaitResult {
    h.prompt(Caller::User, id, text.into(), None, None)
        .await
        .unwrap();
    let r = h.wait(id, T).await.unwrap();
    idle(provider, &r);
    r
}

/// Costs are Claude Code's own figures: every reply reports the same usage, so every turn
/// costs the same, and `n` turns cost `n` times the first.
fn assert_cost(provider: &str, u: &Usage, turns: u64, one: Option<f64>) {
    match (provider, one) {
        ("claude", Some(one)) => {
            let got = u.cost_usd.expect("claude reports a cost");
            let want = one * turns as f64;
            assert!(
                (got - want).abs() < 1e-9,
                "{turns} turns cost {got}, not {want}"
            );
        }
        ("claude", None) => unreachable!(),
        _ => assert_eq!(
            u.cost_usd, None,
            "{provider} reports no cost: none invented"
        ),
    }
}

#[tokio::test]
async fn claude_and_codex_usage_sums_over_turns_trees_and_a_restart() {
    let f = Fixture::new().await;
    let mut agents: Vec<(&str, AgentId, AgentId, Option<f64>)> = Vec::new();
    let ws: WorkspaceId;
    {
        let rt = f.start().await;
        let h = rt.handle();
        ws = h
            .add_workspace(f.work.path().display().to_string())
            .await
            .unwrap()
            .record
            .workspace_id;
        for p in ["claude", "codex"] {
            let a = h.create(create(p, &ws, "first")).await.unwrap();
            let r = h.wait(a.id(), T).await.unwrap();
            idle(p, &r);
            let u = &r.agent.record.usage;
            assert_eq!((of(u), u.turns), (tokens(p, 1), 1), "{p} after one turn");
            let one = u.cost_usd;
            if p == "claude" {
                assert!(one.is_some_and(|c| c > 0.0), "claude's cost: {one:?}");
            }
            let r = turn(&h, p, a.id(), "second").await;
            let u = &r.agent.record.usage;
            assert_eq!((of(u), u.turns), (tokens(p, 2), 2), "{p} after two turns");
            assert_cost(p, u, 2, one);

            // A child of it: the parent's tree sums both, before and after the child is archived.
            let mut c = create(p, &ws, "child");
            c.caller = Caller::Agent(a.id());
            c.subagent = true;
            c.notify_on_finish = Some(false);
            let child = h.create(c).await.unwrap();
            let r = h.wait(child.id(), T).await.unwrap();
            idle(p, &r);
            assert_eq!(of(&r.agent.record.usage), tokens(p, 1), "{p} child");
            let parent = h.get(a.id()).await.unwrap();
            assert_eq!(of(&parent.record.usage), tokens(p, 2), "{p} parent's own");
            assert_eq!(of(&parent.tree_usage), tokens(p, 3), "{p} tree");
            assert_eq!(parent.tree_usage.turns, 3);
            assert_cost(p, &parent.tree_usage, 3, one);
            h.archive(Caller::User, child.id()).await.unwrap();
            let parent = h.get(a.id()).await.unwrap();
            assert_eq!(
                of(&parent.tree_usage),
                tokens(p, 3),
                "{p} tree with an archived child"
            );
            agents.push((p, a.id(), child.id(), one));
        }
        let snap = h.snapshot().await.unwrap();
        let w = snap.workspaces.iter().find(|w| w.record.workspace_id == ws);
        let u = &w.expect("the workspace").usage;
        let (c, x) = (tokens("claude", 3), tokens("codex", 3));
        assert_eq!(
            of(u),
            (c.0 + x.0, c.1 + x.1, c.2 + x.2, c.3 + x.3),
            "workspace"
        );
        let claude_one = agents[0].3.unwrap();
        assert!(
            (u.cost_usd.unwrap() - 3.0 * claude_one).abs() < 1e-9,
            "{u:?}"
        );
        // The full snapshot carries the same roll-up as a single agent's.
        for (p, id, _, _) in &agents {
            let s = snap.agents.iter().find(|s| s.id() == *id).unwrap();
            assert_eq!(of(&s.tree_usage), tokens(p, 3), "{p} in the fleet snapshot");
        }
        rt.shutdown().await;
    }
    // After a restart, each session resumes in a new process: the sums go on from the records.
    let rt = f.start().await;
    let h = rt.handle();
    for (p, id, _, one) in &agents {
        let before = h.get(*id).await.unwrap();
        assert_eq!(of(&before.record.usage), tokens(p, 2), "{p} reloaded");
        assert_eq!(of(&before.tree_usage), tokens(p, 3), "{p} tree reloaded");
        let r = turn(&h, p, *id, "third").await;
        let u = &r.agent.record.usage;
        assert_eq!((of(u), u.turns), (tokens(p, 3), 3), "{p} after the restart");
        assert_cost(p, u, 3, *one);
        let after = h.get(*id).await.unwrap();
        assert_eq!(
            of(&after.tree_usage),
            tokens(p, 4),
            "{p} tree after the restart"
        );
    }
    rt.shutdown().await;
}

#[tokio::test]
async fn shell_agents_record_wall_time_and_exit_code_instead() {
    let f = Fixture::new().await;
    let rt = f.start().await;
    let h = rt.handle();
    let ws = h
        .add_workspace(f.work.path().display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id;
    let a = h
        .create(create("shell", &ws, "sleep 0.3; exit 3"))
        .await
        .unwrap();
    let r = h.wait(a.id(), T).await.unwrap();
    assert_eq!(r.agent.status, Status::Error);
    let slept = r.agent.record.last_run.clone().expect("the last run");
    assert_eq!(slept.exit_code, Some(3));
    assert!((300..10_000).contains(&slept.wall_ms), "{slept:?}");
    assert!(r.agent.record.usage.is_empty());
    h.prompt(Caller::User, a.id(), "true".into(), None, None)
        .await
        .unwrap();
    let r = h.wait(a.id(), T).await.unwrap();
    assert_eq!(r.agent.status, Status::Idle);
    let run = r.agent.record.last_run.clone().expect("the last run");
    assert_eq!(run.exit_code, Some(0));
    assert!(run.wall_ms < slept.wall_ms, "{run:?} after {slept:?}");
    // Stored, so a restart still shows it.
    rt.shutdown().await;
    let rt = f.start().await;
    let again = rt.handle().get(a.id()).await.unwrap();
    assert_eq!(again.record.last_run.and_then(|r| r.exit_code), Some(0));
    rt.shutdown().await;
}
