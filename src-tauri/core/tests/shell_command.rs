//! The shell and command providers with real processes: turns, process-tree cleanup, output
//! floods, processes dying mid-turn, interrupts.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use paseo_core::config::{Config, ProviderConfig, ProviderKind};
use paseo_core::model::ItemKind;
use paseo_core::providers::command::CommandProvider;
use paseo_core::providers::shell::ShellProvider;
use paseo_core::providers::{
    Provider, ProviderError, ProviderEvent, ProviderRegistry, Session, TurnInput, TurnOutcome,
};
use support::*;

async fn shell_session(
    dir: &std::path::Path,
    cap: usize,
) -> (Box<dyn Session>, Events, paseo_core::providers::SessionSpec) {
    let provider = ShellProvider::new("shell", ProviderConfig::new(ProviderKind::Shell));
    let mut spec = spec(dir);
    spec.mcp = Some(mcp_access());
    let (sink, mut events) = sink(spec.agent_id, cap);
    let session = provider.start(spec.clone(), sink).await.unwrap();
    events.ready().await;
    (session, events, spec)
}

fn prompt(s: &str) -> TurnInput {
    TurnInput::Prompt(s.to_string())
}

#[tokio::test]
async fn shell_turns_stream_output_and_report_exit_status() {
    // A variable of a parent Claude Code session must not leak into the agent.
    std::env::set_var("CLAUDECODE", "1");
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut ev, spec) = shell_session(dir.path(), 16).await;

    s.send(prompt("echo hello; echo oops >&2; pwd; echo \"id=$PASEO_AGENT_ID url=$PASEO_MCP_URL tok=$PASEO_MCP_TOKEN cc=${CLAUDECODE:-unset}\"")).await_ok();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    let out = t.output("stdout");
    assert!(out.starts_with("hello\n"), "{out:?}");
    assert!(out.contains(&dir.path().display().to_string()), "{out:?}");
    assert!(
        out.contains(&format!(
            "id={} url=http://127.0.0.1:9/mcp tok=test-token cc=unset",
            spec.agent_id
        )),
        "{out:?}"
    );
    assert_eq!(t.output("stderr"), "oops\n");
    assert!(t.last_message.as_deref().unwrap().contains("hello"));

    // A second turn on the same session; failure carries the exit code and stderr.
    s.send(prompt("echo partial; echo 'no such thing' >&2; exit 3"))
        .await_ok();
    let t = ev.turn().await;
    match t.outcome() {
        TurnOutcome::Failed { message } => {
            assert!(message.contains("exited with code 3"), "{message}");
            assert!(message.contains("no such thing"), "{message}");
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(t.output("stdout"), "partial\n");

    // A shell cannot read: a finish notice must never run as a command.
    assert!(matches!(
        s.send(TurnInput::Notice(
            "<paseo-notice>rm -rf ~</paseo-notice>".into()
        )),
        Err(ProviderError::Invalid(_))
    ));
    s.send(prompt("true")).await_ok();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Completed);
    s.close().await;
}

#[tokio::test]
async fn shell_refuses_a_second_turn_while_one_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut ev, _) = shell_session(dir.path(), 16).await;
    s.send(prompt("sleep 30")).await_ok();
    assert!(matches!(
        s.send(prompt("echo no")),
        Err(ProviderError::Invalid(_))
    ));
    s.interrupt().unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Canceled);
    s.close().await;
}

#[tokio::test]
async fn close_kills_the_whole_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut ev, _) = shell_session(dir.path(), 16).await;
    // Turn 1 leaves a background process behind and completes.
    s.send(prompt("sleep 300 & echo $! > bg.pid; echo started"))
        .await_ok();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Completed);
    let bg = read_pid(&dir.path().join("bg.pid")).await;
    // Turn 2 is running, with a grandchild, when the session is closed.
    // One grandchild escaped into its own session (setsid): only the process tree knows it.
    s.send(prompt(
        "sh -c 'sleep 300 & echo $! > gc.pid; wait' & setsid sleep 300 & echo $! > setsid.pid; echo $$ > leader.pid; wait",
    ))
    .await_ok();
    let gc = read_pid(&dir.path().join("gc.pid")).await;
    let escaped = read_pid(&dir.path().join("setsid.pid")).await;
    let leader = read_pid(&dir.path().join("leader.pid")).await;
    for pid in [bg, gc, escaped, leader] {
        assert!(alive(pid), "{pid} should run before close");
    }
    s.close().await;
    for pid in [bg, gc, escaped, leader] {
        assert!(!alive(pid), "{pid} survived close");
    }
}

#[tokio::test]
async fn a_turn_dying_mid_way_fails_with_the_signal_and_keeps_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut ev, _) = shell_session(dir.path(), 16).await;
    s.send(prompt("echo before; kill -9 $$; echo after"))
        .await_ok();
    let t = ev.turn().await;
    match t.outcome() {
        TurnOutcome::Failed { message } => {
            assert!(
                message.contains("killed by signal 9 (SIGKILL)"),
                "{message}"
            )
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(t.output("stdout"), "before\n");
    // The session is still usable.
    s.send(prompt("echo again")).await_ok();
    assert_eq!(ev.turn().await.output("stdout"), "again\n");
    s.close().await;
}

#[tokio::test]
async fn interrupt_cancels_and_escalates_when_sigint_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut ev, _) = shell_session(dir.path(), 16).await;
    s.send(prompt("echo $$ > p1.pid; sleep 60")).await_ok();
    let p1 = read_pid(&dir.path().join("p1.pid")).await;
    s.interrupt().unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Canceled);
    assert!(!alive(p1));

    // A turn that ignores SIGINT is terminated after the grace period.
    s.send(prompt("trap '' INT; echo $$ > p2.pid; sleep 60 & wait"))
        .await_ok();
    let p2 = read_pid(&dir.path().join("p2.pid")).await;
    s.interrupt().unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Canceled);
    assert!(!alive(p2));
    s.close().await;
}

#[tokio::test]
async fn an_output_flood_is_batched_and_memory_stays_bounded() {
    const TOTAL: usize = 50 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut ev, _) = shell_session(dir.path(), 4).await;
    let base = rss();
    s.send(prompt(&format!("head -c {TOTAL} /dev/zero | tr '\\0' x")))
        .await_ok();
    let mut received = 0usize;
    let mut batches = 0usize;
    let mut peak = base;
    let mut paused = false;
    loop {
        match ev.next().await {
            ProviderEvent::Items(items) => {
                batches += 1;
                let bytes: usize = items.iter().map(|i| i.text.len()).sum();
                assert!(bytes <= 96 * 1024, "a batch of {bytes} bytes");
                assert!(items
                    .iter()
                    .all(|i| i.kind == ItemKind::Output && i.text.len() <= 16 * 1024));
                received += bytes;
                if !paused && received > TOTAL / 4 {
                    // A slow consumer: the producer must wait instead of piling up output.
                    paused = true;
                    tokio::time::sleep(Duration::from_millis(700)).await;
                }
                peak = peak.max(rss());
            }
            ProviderEvent::LastMessage(m) => assert!(m.chars().count() <= 4000),
            ProviderEvent::TurnEnded(o) => {
                assert_eq!(o, TurnOutcome::Completed);
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(received, TOTAL);
    assert!(
        batches < TOTAL / (16 * 1024),
        "{batches} batches: output was not coalesced"
    );
    let growth = peak.saturating_sub(base);
    assert!(
        growth < 24 * 1024 * 1024,
        "memory grew by {} MiB",
        growth / (1024 * 1024)
    );
    s.close().await;
}

fn write_script(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn command_providers_take_the_prompt_as_argument_or_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let arg_bot = write_script(
        dir.path(),
        "argbot",
        r#"echo "arg: $2 ($1) token=$PASEO_MCP_TOKEN extra=$BOT_EXTRA""#,
    );
    let stdin_bot = write_script(
        dir.path(),
        "stdinbot",
        r#"read line; echo "stdin: $line"; echo warn >&2; exit 0"#,
    );
    let config = Config::parse(
        &serde_json::json!({"providers": {
            "argbot": {"kind": "command", "label": "Arg bot", "command": [arg_bot, "--go", "<{prompt}>"],
                       "env": {"BOT_EXTRA": "yes"}},
            "stdinbot": {"kind": "command", "command": [stdin_bot], "stdin": true},
            "ghost": {"kind": "command", "command": ["paseo-no-such-binary-xyz", "{prompt}"]}
        }})
        .to_string(),
        "config.json",
    )
    .unwrap();
    let reg = ProviderRegistry::from_config(&config);
    let infos = reg.infos();
    let by_id = |id: &str| infos.iter().find(|i| i.id == id).unwrap().clone();
    assert!(by_id("argbot").available);
    assert!(!by_id("argbot").reads_prompts);
    assert!(by_id("stdinbot").reads_prompts);
    assert!(by_id("shell").available && !by_id("shell").reads_prompts);
    let ghost = by_id("ghost");
    assert!(!ghost.available);
    assert!(
        ghost
            .reason
            .as_deref()
            .unwrap()
            .contains("paseo-no-such-binary-xyz"),
        "{ghost:?}"
    );
    match reg.resolve("ghost") {
        Err(ProviderError::Unavailable { reason, .. }) => {
            assert!(reason.contains("not found on PATH"))
        }
        _ => panic!("ghost resolved"),
    }
    let spec0 = spec(dir.path());
    let (sink0, _ev0) = sink(spec0.agent_id, 4);
    let err = reg
        .get("ghost")
        .unwrap()
        .start(spec0, sink0)
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("not found on PATH"), "{err}");

    let mut sp = spec(dir.path());
    sp.mcp = Some(mcp_access());
    let (sink1, mut ev) = sink(sp.agent_id, 16);
    let mut s = reg.get("argbot").unwrap().start(sp, sink1).await.unwrap();
    ev.ready().await;
    s.send(prompt("hello bot")).await_ok();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(
        t.output("stdout"),
        "arg: <hello bot> (--go) token=test-token extra=yes\n"
    );
    s.close().await;

    let sp = spec(dir.path());
    let (sink2, mut ev) = sink(sp.agent_id, 16);
    let mut s = reg.get("stdinbot").unwrap().start(sp, sink2).await.unwrap();
    ev.ready().await;
    s.send(TurnInput::Notice(
        "<paseo-notice>child finished</paseo-notice>".into(),
    ))
    .await_ok();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(
        t.output("stdout"),
        "stdin: <paseo-notice>child finished</paseo-notice>\n"
    );
    assert_eq!(t.output("stderr"), "warn\n");
    assert_eq!(
        t.last_message.as_deref(),
        Some("stdin: <paseo-notice>child finished</paseo-notice>\nwarn\n")
    );
    s.close().await;
}

#[tokio::test]
async fn command_agents_die_interrupt_and_leave_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let bot = write_script(
        dir.path(),
        "bot",
        r#"case "$1" in
  die) echo dying; kill -KILL $$ ;;
  spawn) sleep 300 & echo $! > gc.pid; echo $$ > bot.pid; wait ;;
  *) echo "ok $1" ;;
esac"#,
    );
    let provider = CommandProvider::new(
        "bot",
        ProviderConfig {
            command: Some(vec![bot, "{prompt}".into()]),
            ..ProviderConfig::new(ProviderKind::Command)
        },
    );
    let sp = spec(dir.path());
    let (sink1, mut ev) = sink(sp.agent_id, 16);
    let mut s = provider.start(sp, sink1).await.unwrap();
    ev.ready().await;

    s.send(prompt("die")).await_ok();
    let t = ev.turn().await;
    assert!(
        matches!(t.outcome(), TurnOutcome::Failed { message } if message.contains("SIGKILL")),
        "{t:?}"
    );
    assert_eq!(t.output("stdout"), "dying\n");

    s.send(prompt("spawn")).await_ok();
    let bot_pid = read_pid(&dir.path().join("bot.pid")).await;
    s.interrupt().unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Canceled);
    assert!(!alive(bot_pid));

    s.send(prompt("spawn")).await_ok();
    let gc = poll("the new grandchild", || {
        let p = std::fs::read_to_string(dir.path().join("gc.pid")).ok()?;
        let p: i32 = p.trim().parse().ok()?;
        alive(p).then_some(p)
    })
    .await;
    s.close().await;
    assert!(!alive(gc), "grandchild {gc} survived close");
}

/// `Session::send` returns a `Result`; tests unwrap it in one word.
trait AwaitOk {
    fn await_ok(self);
}
impl AwaitOk for Result<(), ProviderError> {
    fn await_ok(self) {
        self.unwrap()
    }
}

#[tokio::test]
async fn close_does_not_wait_for_a_sink_nobody_drains() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, _ev, _) = shell_session(dir.path(), 1).await;
    s.send(prompt("echo $$ > flood.pid; yes")).await_ok();
    let pid = read_pid(&dir.path().join("flood.pid")).await;
    // Nothing reads the events: the flood fills the sink and the session's tasks block on it.
    tokio::time::timeout(WAIT, s.close())
        .await
        .expect("close resolved although the sink is full");
    assert!(!alive(pid));
}

#[tokio::test]
async fn the_builtin_shell_takes_command_and_env_from_the_config_file() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.json"),
        r#"{"providers": {"shell": {"command": ["/bin/sh"], "env": {"GREETING": "hi from config"}}}}"#,
    )
    .unwrap();
    let reg = ProviderRegistry::from_config(&Config::load(home.path()).unwrap());
    let sp = spec(home.path());
    let (sink1, mut ev) = sink(sp.agent_id, 16);
    let mut s = reg
        .resolve("shell")
        .unwrap()
        .start(sp, sink1)
        .await
        .unwrap();
    ev.ready().await;
    s.send(prompt("echo \"$GREETING from $0\"")).await_ok();
    let t = ev.turn().await;
    assert_eq!(t.output("stdout"), "hi from config from /bin/sh\n");
    s.close().await;

    std::fs::write(
        home.path().join("config.json"),
        r#"{"providers": {"shell": {"command": ["/no/such/shell"]}}}"#,
    )
    .unwrap();
    let reg = ProviderRegistry::from_config(&Config::load(home.path()).unwrap());
    let info = reg.get("shell").unwrap().info();
    assert!(!info.available);
    assert_eq!(
        info.reason.as_deref(),
        Some("/no/such/shell does not exist")
    );

    std::fs::write(
        home.path().join("config.json"),
        r#"{"providers": {"shell": {"command": "sh"}}}"#,
    )
    .unwrap();
    let err = Config::load(home.path()).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "config.json: providers.shell.command: expected a non-empty array of strings"
        ),
        "{err}"
    );
}
