//! The shell and command providers with real processes: turns, process-tree cleanup, output
//! floods, processes dying mid-turn, interrupts.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use paseo_core::config::{Config, ProviderConfig, ProviderKind};
use paseo_core::model::ItemKind;
use paseo_core::providers::command::CommandProvider;
use paseo_core::providers::process::group_members;
use paseo_core::providers::shell::ShellProvider;
use paseo_core::providers::{
    ProviderError, ProviderEvent, ProviderRegistry, Session, SessionSpec, TurnInput, TurnOutcome,
};
use support::*;

/// A shell agent's ready session in a temp dir, its sink holding `cap` events.
struct Shell {
    dir: tempfile::TempDir,
    s: Box<dyn Session>,
    ev: Events,
    spec: SessionSpec,
}

async fn shell_session(cap: usize) -> Shell {
    let dir = tempfile::tempdir().unwrap();
    let provider = ShellProvider::new("shell", ProviderConfig::new(ProviderKind::Shell));
    let mut spec = spec(dir.path());
    spec.mcp = Some(mcp_access());
    let Started { s, ev, .. } = start(&provider, spec.clone(), cap).await;
    Shell { dir, s, ev, spec }
}

impl Shell {
    /// Starts a command line as a turn.
    fn send(&mut self, command: &str) {
        self.s.send(prompt(command)).unwrap();
    }
    /// Runs a command line as a turn, to its end.
    async fn run(&mut self, command: &str) -> Turn {
        self.send(command);
        self.ev.turn().await
    }
    /// Interrupts the running turn; it ends canceled.
    async fn interrupt(&mut self) {
        self.s.interrupt().unwrap();
        assert_eq!(self.ev.turn().await.outcome(), &TurnOutcome::Canceled);
    }
    /// The pid a turn wrote to `file` in the agent's cwd.
    async fn pid(&self, file: &str) -> i32 {
        read_pid(&self.dir.path().join(file)).await
    }
}

#[tokio::test]
async fn shell_turns_stream_output_and_report_exit_status() {
    // A variable of a parent Claude Code session must not leak into the agent.
    std::env::set_var("CLAUDECODE", "1");
    let mut sh = shell_session(16).await;
    let t = sh.run("echo hello; echo oops >&2; pwd; echo \"id=$PASEO_AGENT_ID url=$PASEO_MCP_URL tok=$PASEO_MCP_TOKEN cc=${CLAUDECODE:-unset}\"").await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    let out = t.output("stdout");
    assert!(out.starts_with("hello\n"), "{out:?}");
    assert!(
        out.contains(&sh.dir.path().display().to_string()),
        "{out:?}"
    );
    assert!(
        out.contains(&format!(
            "id={} url=http://127.0.0.1:9/mcp tok=test-token cc=unset",
            sh.spec.agent_id
        )),
        "{out:?}"
    );
    assert_eq!(t.output("stderr"), "oops\n");
    assert!(t.last_message.as_deref().unwrap().contains("hello"));

    // A second turn on the same session; failure carries the exit code and stderr.
    let t = sh
        .run("echo partial; echo 'no such thing' >&2; exit 3")
        .await;
    let message = t.failure();
    assert!(message.contains("exited with code 3"), "{message}");
    assert!(message.contains("no such thing"), "{message}");
    assert_eq!(t.output("stdout"), "partial\n");
    // The stderr is in the timeline as output: the error the timeline shows says only how the
    // command ended, so the message is not said twice.
    assert_eq!(
        t.outcome(),
        &TurnOutcome::Failed {
            message: "the command exited with code 3".into(),
            detail: Some("no such thing".into()),
        }
    );

    // A shell cannot read: a finish notice must never run as a command.
    let notice = TurnInput::Notice("<paseo-notice>rm -rf ~</paseo-notice>".into());
    assert!(matches!(sh.s.send(notice), Err(ProviderError::Invalid(_))));
    assert_eq!(sh.run("true").await.outcome(), &TurnOutcome::Completed);
    sh.s.close().await;
}

/// A real process's escape sequences: colours and styles become runs over plain text (so the
/// timeline, the last message and the error never hold escape bytes), cursor moves and titles
/// are dropped, and a colour left on does not leak into the next turn.
#[tokio::test]
async fn shell_output_colours_become_styled_runs_and_control_sequences_are_dropped() {
    use paseo_core::model::{TermColor, TermStyle};
    let mut sh = shell_session(16).await;
    let t = sh
        .run(r"printf '\033[2J\033[H\033]0;title\007\033[31mred\033[0m plain \033[1;38;5;208mhot'; printf '\033[35mmagenta\n' >&2; exit 2")
        .await;
    assert_eq!(t.output("stdout"), "red plain hot");
    assert_eq!(t.output("stderr"), "magenta\n");
    let out = t
        .items
        .iter()
        .find(|i| i.stream.as_deref() == Some("stdout"))
        .unwrap();
    let styles: Vec<_> = out.runs.iter().map(|r| (r.len, r.style)).collect();
    let red = TermStyle {
        fg: Some(TermColor::Palette(1)),
        ..TermStyle::default()
    };
    let hot = TermStyle {
        fg: Some(TermColor::Palette(208)),
        bold: true,
        ..TermStyle::default()
    };
    assert_eq!(styles, [(3, red), (7, TermStyle::default()), (3, hot)]);
    let last = t.last_message.as_deref().unwrap();
    assert!(
        last.contains("red plain hot") && last.contains("magenta"),
        "{last:?}"
    );
    assert!(!last.contains('\u{1b}'), "{last:?}");
    assert!(t.failure().ends_with(": magenta"), "{}", t.failure());
    // The next turn starts plain, although the last one left a colour on.
    let t = sh.run("echo next").await;
    assert_eq!(t.output("stdout"), "next\n");
    assert!(t.items.iter().all(|i| i.runs.is_empty()), "{:?}", t.items);
}

#[tokio::test]
async fn shell_refuses_a_second_turn_while_one_runs() {
    let mut sh = shell_session(16).await;
    sh.send("sleep 30");
    let second = sh.s.send(prompt("echo no"));
    assert!(matches!(second, Err(ProviderError::Invalid(_))));
    sh.interrupt().await;
    sh.s.close().await;
}

#[tokio::test]
async fn close_kills_the_whole_process_tree() {
    let mut sh = shell_session(16).await;
    // Turn 1 leaves a background process behind and completes.
    let t = sh.run("sleep 300 & echo $! > bg.pid; echo started").await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    let bg = sh.pid("bg.pid").await;
    // Turn 2 is running, with a grandchild, when the session is closed.
    // One grandchild escaped into its own session (setsid): only the process tree knows it.
    sh.send("sh -c 'sleep 300 & echo $! > gc.pid; wait' & setsid sleep 300 & echo $! > setsid.pid; echo $$ > leader.pid; wait");
    let gc = sh.pid("gc.pid").await;
    let escaped = sh.pid("setsid.pid").await;
    let leader = sh.pid("leader.pid").await;
    for pid in [bg, gc, escaped, leader] {
        assert!(alive(pid), "{pid} should run before close");
    }
    sh.s.close().await;
    for pid in [bg, gc, escaped, leader] {
        assert!(!alive(pid), "{pid} survived close");
    }
}

#[tokio::test]
async fn a_turn_dying_mid_way_fails_with_the_signal_and_keeps_its_output() {
    let mut sh = shell_session(16).await;
    let t = sh.run("echo before; kill -9 $$; echo after").await;
    let message = t.failure();
    assert!(
        message.contains("killed by signal 9 (SIGKILL)"),
        "{message}"
    );
    assert_eq!(t.output("stdout"), "before\n");
    // The session is still usable.
    assert_eq!(sh.run("echo again").await.output("stdout"), "again\n");
    sh.s.close().await;
}

#[tokio::test]
async fn interrupt_cancels_and_escalates_when_sigint_is_ignored() {
    let mut sh = shell_session(16).await;
    sh.send("echo $$ > p1.pid; sleep 60");
    let p1 = sh.pid("p1.pid").await;
    sh.interrupt().await;
    assert!(!alive(p1));

    // A turn that ignores SIGINT is terminated after the grace period.
    sh.send("trap '' INT; echo $$ > p2.pid; sleep 60 & wait");
    let p2 = sh.pid("p2.pid").await;
    sh.interrupt().await;
    assert!(!alive(p2));
    sh.s.close().await;
}

#[tokio::test]
async fn an_output_flood_is_batched_and_memory_stays_bounded() {
    const TOTAL: usize = 50 * 1024 * 1024;
    let mut sh = shell_session(4).await;
    let base = rss();
    sh.send(&format!("head -c {TOTAL} /dev/zero | tr '\\0' x"));
    let mut received = 0usize;
    let mut batches = 0usize;
    let mut peak = base;
    let mut paused = false;
    loop {
        match sh.ev.next().await {
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
            // The turn's wall time and exit code (its usage line).
            ProviderEvent::Run(_) => {}
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
    sh.s.close().await;
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
            "argbot": {"kind": "command", "label": "Arg bot", "command": [arg_bot, "--go", "{prompt}"],
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
    let Started { mut s, mut ev, .. } = start(&*reg.get("argbot").unwrap(), sp, 16).await;
    // One argument, whatever it holds (SPEC 14): quotes and `;` are text, not shell.
    s.send(prompt("<hello bot>'; echo injected")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(
        t.output("stdout"),
        "arg: <hello bot>'; echo injected (--go) token=test-token extra=yes\n"
    );
    s.close().await;

    let stdinbot = reg.get("stdinbot").unwrap();
    let Started { mut s, mut ev, .. } = start(&*stdinbot, spec(dir.path()), 16).await;
    s.send(TurnInput::Notice(
        "<paseo-notice>child finished</paseo-notice>".into(),
    ))
    .unwrap();
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
    let Started { mut s, mut ev, .. } = start(&provider, spec(dir.path()), 16).await;

    s.send(prompt("die")).unwrap();
    let t = ev.turn().await;
    assert!(
        matches!(t.outcome(), TurnOutcome::Failed { message, .. } if message.contains("SIGKILL")),
        "{t:?}"
    );
    assert_eq!(t.output("stdout"), "dying\n");

    s.send(prompt("spawn")).unwrap();
    let bot_pid = read_pid(&dir.path().join("bot.pid")).await;
    s.interrupt().unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Canceled);
    assert!(!alive(bot_pid));

    s.send(prompt("spawn")).unwrap();
    let gc = poll("the new grandchild", || {
        let p = std::fs::read_to_string(dir.path().join("gc.pid")).ok()?;
        let p: i32 = p.trim().parse().ok()?;
        alive(p).then_some(p)
    })
    .await;
    s.close().await;
    assert!(!alive(gc), "grandchild {gc} survived close");
}

#[tokio::test]
async fn close_does_not_wait_for_a_sink_nobody_drains() {
    let mut sh = shell_session(1).await;
    sh.send("echo $$ > flood.pid; yes");
    let pid = sh.pid("flood.pid").await;
    // Nothing reads the events: the flood fills the sink and the session's tasks block on it.
    tokio::time::timeout(WAIT, sh.s.close())
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
    let shell = reg.resolve("shell").unwrap();
    let Started { mut s, mut ev, .. } = start(&*shell, spec(home.path()), 16).await;
    // The program the turn runs as: the configured shell (its script file follows).
    s.send(prompt(
        "echo \"$GREETING from $(tr '\\0' ' ' < /proc/$$/cmdline | cut -d' ' -f1)\"",
    ))
    .unwrap();
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

/// SPEC 9, 11: a command line longer than one argument may be (Linux: 128 KiB) still runs, as a
/// private script file removed after its turn, never an E2BIG failure.
#[tokio::test]
async fn a_command_line_longer_than_an_argument_runs_from_a_private_script() {
    let mut sh = shell_session(64).await;
    // 3,000 lines of `: padding…` (≈ 300 KiB) then the commands that show it all ran.
    let mut script = String::new();
    for i in 0..3_000 {
        script.push_str(&format!(": {i} {}\n", "x".repeat(96)));
    }
    script.push_str("echo \"script=$0\"\nls -l \"$0\" | cut -c1-10\necho done-long\n");
    assert!(script.len() > paseo_core::providers::oneshot::MAX_ARG_BYTES);
    let t = sh.run(&script).await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed, "{t:?}");
    let out = t.output("stdout");
    assert!(out.contains("done-long"), "{out:?}");
    assert!(out.contains("-rw-------"), "the script is private: {out:?}");
    let path = out
        .lines()
        .find_map(|l| l.strip_prefix("script="))
        .expect("the script's path")
        .to_string();
    assert!(
        !std::path::Path::new(&path).exists(),
        "{path} outlived its turn"
    );
    // Short command lines go the same way (SPEC 14: never on a command line).
    let t = sh.run("echo \"short=$0\"").await;
    assert!(t.output("stdout").contains("paseo-shell-"), "{t:?}");
    sh.s.close().await;
}

/// SPEC 14 (secrets): a prompt may carry secrets, and every local user can read
/// /proc/<pid>/cmdline; while a shell turn runs, no process of its group has the prompt there.
#[tokio::test]
async fn a_running_shell_prompt_is_on_no_command_line_of_its_process_group() {
    let mut sh = shell_session(16).await;
    // `sleep` not last: a shell may exec its last command, replacing its own command line.
    let prompt = "echo $$ > leader.pid; echo secret-marker-7f3a >/dev/null; sleep 30; echo done";
    sh.send(prompt);
    let leader = sh.pid("leader.pid").await;
    // The shell is the group's leader (each turn runs in its own group).
    let members = group_members(leader);
    assert!(members.contains(&leader), "{members:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let sleeping = |pid: &i32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
    };
    while !group_members(leader).iter().any(sleeping) {
        assert!(std::time::Instant::now() < deadline, "sleep never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for pid in group_members(leader) {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(
            !cmdline.contains("secret-marker-7f3a"),
            "process {pid} shows the prompt on its command line: {cmdline:?}"
        );
    }
    sh.interrupt().await;
    // A prompt that reads standard input gets end-of-file, not the rest of its own script.
    let t = sh
        .run("read line; echo \"got=[$line] status=$?\"; echo after-read")
        .await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed, "{t:?}");
    let out = t.output("stdout");
    assert!(out.contains("got=[] status=1"), "{out:?}");
    assert!(out.contains("after-read"), "{out:?}");
    // Exit status still decides the turn.
    assert!(sh
        .run("exit 4")
        .await
        .failure()
        .contains("exited with code 4"));
    sh.s.close().await;
}
