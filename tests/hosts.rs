//! Hosts (SPEC 17) with real parts: `paseo-headless attach` against real backends, and the
//! core's host client through the system `ssh` to a real `sshd` on loopback, as a throwaway
//! user (hosts_support). No SSH stand-in.

mod hosts_support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hosts_support::{alive, stop_pid, Sshd, HEADLESS};
use paseo_core::api::{Event, Request, Response};
use paseo_core::hosts::protocol::Hello;
use paseo_core::hosts::{install, HostClient, HostError, Update};
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedReceiver;

const VERSION: &str = env!("CARGO_PKG_VERSION");

// ------------------------------------------------------------------ attach, on this machine

/// `paseo-headless attach` with its pipes, on `root`.
fn attach(root: &Path, env: &[(&str, &str)]) -> std::process::Child {
    let mut c = Command::new(HEADLESS);
    c.arg("attach")
        .env("PASEO_HOME", root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

fn say_hello(child: &mut std::process::Child, product: &str) -> Value {
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"type": "hello", "product": product, "protocol": 1})
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

fn private_root() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("paseo");
    (dir, root)
}

/// With no backend running, attach starts one in its own session (so it outlives the ssh
/// session), waits until it answers and bridges the frames; the backend stays when attach
/// ends, and the next attach joins the same one.
#[test]
fn attach_starts_a_detached_backend_and_the_next_attach_joins_it() {
    let (_dir, root) = private_root();
    // As from an ssh session that forwards an agent.
    let mut first = attach(
        &root,
        &[
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("SSH_CONNECTION", "10.0.0.1 1 10.0.0.2 22"),
        ],
    );
    let hello = say_hello(&mut first, VERSION);
    assert_eq!(hello["type"], "hello", "{hello}");
    let backend = hello["pid"].as_u64().unwrap() as u32;
    let _stop = StopOnDrop(backend);
    assert_ne!(backend, first.id());
    // SAFETY: getsid of a pid has no preconditions.
    assert_eq!(
        unsafe { libc::getsid(backend as i32) },
        backend as i32,
        "its own session"
    );
    let environ = std::fs::read(format!("/proc/{backend}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        !environ.contains("SSH_AUTH_SOCK") && !environ.contains("SSH_CONNECTION"),
        "the session's ssh agent stays behind"
    );
    assert!(environ.contains("PASEO_HOME="));
    {
        let stdin = first.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            r#"{{"type":"request","id":1,"request":{{"kind":"syncSnapshot"}}}}"#
        )
        .unwrap();
        let mut line = String::new();
        BufReader::new(first.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["response"]["kind"], "synced", "{answer}");
    }
    drop(first.stdin.take());
    let status = first.wait().unwrap();
    assert!(status.success(), "{status}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(alive(backend), "the backend outlives attach");

    let mut second = attach(&root, &[]);
    let hello = say_hello(&mut second, VERSION);
    assert_eq!(
        hello["pid"].as_u64(),
        Some(backend as u64),
        "the same backend"
    );
    drop(second.stdin.take());
    assert!(second.wait().unwrap().success());
}

/// A backend that cannot start, and a backend of another version: one clear line on stderr,
/// a non-zero exit.
#[test]
fn attach_says_why_in_one_line_when_it_cannot_join() {
    // The lock is a folder: no backend can take this root.
    let (_dir, root) = private_root();
    std::fs::create_dir_all(root.join("lock")).unwrap();
    let child = attach(&root, &[]);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("paseo-headless attach: the backend did not start: "),
        "{err}"
    );

    // The backend this attach starts reports another version (the test's override).
    let (_dir, root) = private_root();
    let mut child = attach(&root, &[("PASEO_TEST_BACKEND_VERSION", "0.0.1-host")]);
    let refused = say_hello(&mut child, VERSION);
    assert_eq!(refused["type"], "refused", "{refused}");
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("0.0.1-host") && err.contains(VERSION), "{err}");
    // Stop the backend it started, by the pid its lock file names.
    let lock = std::fs::read_to_string(root.join("lock")).unwrap_or_default();
    if let Some(pid) = lock.split_whitespace().find_map(|w| w.parse::<u32>().ok()) {
        stop_pid(pid);
    }
}

struct StopOnDrop(u32);
impl Drop for StopOnDrop {
    fn drop(&mut self) {
        stop_pid(self.0);
    }
}

// ------------------------------------------------------------------ over ssh

/// Installs this build's paseo-headless for the host user (the install path under test) and
/// connects.
async fn installed_and_connected(sshd: &mut Sshd) -> (HostClient, UnboundedReceiver<Update>) {
    let host = sshd.host("box");
    install(&host, &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    let (client, updates) = HostClient::connect(host, sshd.ssh_options())
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    sshd.backends.extend(client.backend_pid());
    (client, updates)
}

async fn next(updates: &mut UnboundedReceiver<Update>) -> Update {
    tokio::time::timeout(Duration::from_secs(60), updates.recv())
        .await
        .expect("no update within 60 s")
        .expect("the client stopped")
}

async fn create_shell(client: &HostClient, cwd: &Path, prompt: &str) -> paseo_core::model::AgentId {
    let request = Request::from_value(json!({
        "kind": "createAgent", "provider": "shell",
        "workspace": {"kind": "directory", "path": cwd.display().to_string()},
        "prompt": prompt,
    }))
    .unwrap();
    match client.call(request).await.unwrap() {
        Response::Agent(agent) => agent.id(),
        other => panic!("{other:?}"),
    }
}

fn output_of(event: &Event) -> String {
    match event {
        Event::TimelineItems { items, .. } => {
            items.iter().map(|i| format!("{}\n", i.text)).collect()
        }
        _ => String::new(),
    }
}

/// The whole way: ssh → attach → the host's backend (started detached as the host's user);
/// a shell agent created there runs as that user in its home; its output comes back as
/// events, numbered after the snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_runs_on_the_host_as_its_user_and_its_events_come_back() {
    let Some(mut sshd) = Sshd::start("agent") else {
        return;
    };
    let (client, mut updates) = installed_and_connected(&mut sshd).await;
    let Update::Synced { seq, window } = next(&mut updates).await else {
        panic!("the first update is the snapshot")
    };
    assert!(serde_json::from_str::<Value>(&window).is_ok());
    let home = sshd.user.home.clone();
    let id = create_shell(&client, &home, "echo host-$(id -un)-$((6*7)) in $(pwd)").await;
    let mut seen = String::new();
    let mut last = seq;
    while !seen.contains(&format!("host-{}-42 in {}", sshd.user.name, home.display())) {
        match next(&mut updates).await {
            Update::Event { seq, event } => {
                assert_eq!(seq, last + 1, "numbered one by one after the snapshot");
                last = seq;
                seen.push_str(&output_of(&event));
            }
            other => panic!("{other:?}"),
        }
    }
    // The record lives in the host user's data root, not here.
    let records = sshd.user.home.join(".paseo");
    assert!(records.is_dir());
    let meta = std::fs::metadata(records.join("backend.sock")).unwrap();
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    assert_eq!(meta.uid(), sshd.user.uid);
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    match client
        .call(Request::GetAgent(paseo_core::api::verbs::GetAgent {
            agent_id: id,
        }))
        .await
        .unwrap()
    {
        Response::Agent(agent) => assert_eq!(agent.id(), id),
        other => panic!("{other:?}"),
    }
}

/// A host without paseo-headless: the connect says so (install helps); the install copies
/// this machine's binary to ~/.local/bin over the same ssh; then it connects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_without_paseo_headless_gets_it_installed_then_connects() {
    let Some(mut sshd) = Sshd::start("install") else {
        return;
    };
    let host = sshd.host("box");
    let error = HostClient::connect(host.clone(), sshd.ssh_options())
        .await
        .err()
        .expect("no paseo-headless on the host yet");
    assert!(
        matches!(error, HostError::NotInstalled { .. }),
        "{error}\n{}",
        sshd.log()
    );
    assert!(error.install_helps());
    install(&host, &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap();
    let installed = sshd.user.home.join(".local/bin/paseo-headless");
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(&installed).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o755);
    assert_eq!(meta.uid(), sshd.user.uid);
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(HEADLESS).unwrap()
    );
    let (client, mut updates) = HostClient::connect(host, sshd.ssh_options()).await.unwrap();
    sshd.backends.extend(client.backend_pid());
    assert!(matches!(next(&mut updates).await, Update::Synced { .. }));
}

/// Versions are compared first: an app of another version gets a clear error naming both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_version_on_the_host_is_a_clear_error_naming_both() {
    let Some(mut sshd) = Sshd::start("version") else {
        return;
    };
    let (client, _updates) = installed_and_connected(&mut sshd).await;
    drop(client);
    let laptop = Hello {
        product: "0.0.1-laptop".into(),
        ..Hello::ours()
    };
    let error = HostClient::connect_as(sshd.host("box"), sshd.ssh_options(), laptop)
        .await
        .err()
        .expect("refused");
    assert!(matches!(error, HostError::Version { .. }), "{error}");
    assert!(error.install_helps());
    let message = error.to_string();
    assert!(
        message.contains("0.0.1-laptop") && message.contains(VERSION),
        "{message}"
    );
}

/// ssh killed mid-stream: nothing stops on the host; the client says it is disconnected,
/// reconnects, and resynchronises: the snapshot covers what happened meanwhile and no event
/// is handed on twice or skipped after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_ssh_reconnects_and_resyncs_with_nothing_missed_or_doubled() {
    let Some(mut sshd) = Sshd::start("resync") else {
        return;
    };
    let (client, mut updates) = installed_and_connected(&mut sshd).await;
    let Update::Synced { seq, .. } = next(&mut updates).await else {
        panic!()
    };
    let home = sshd.user.home.clone();
    let id = create_shell(
        &client,
        &home,
        "for i in $(seq 1 30); do echo tick-$i; sleep 0.1; done; echo ticks-$((10*3))-done",
    )
    .await;
    let mut seqs = vec![seq];
    let mut items: Vec<u64> = Vec::new();
    let mut text = String::new();
    let mut killed = false;
    let mut resynced = None;
    let deadline = Instant::now() + Duration::from_secs(90);
    while !text.contains("ticks-30-done") {
        assert!(Instant::now() < deadline, "no end: {text}");
        match next(&mut updates).await {
            Update::Event { seq, event } => {
                // One by one after the last event or the snapshot: none skipped, none twice.
                assert_eq!(seq, seqs.last().unwrap() + 1, "{seqs:?}");
                seqs.push(seq);
                if let Event::TimelineItems {
                    agent_id,
                    items: new,
                } = &*event
                {
                    if *agent_id == id {
                        items.extend(new.iter().map(|i| i.seq));
                    }
                }
                text.push_str(&output_of(&event));
                if !killed && text.contains("tick-5\n") {
                    let pid = client.ssh_pid().expect("connected");
                    // SAFETY: the ssh process this client started.
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                    killed = true;
                }
            }
            Update::Disconnected { error, .. } => {
                assert!(killed, "dropped before the kill: {error}");
            }
            Update::Synced { seq, .. } => {
                assert!(killed);
                assert!(
                    seq >= *seqs.last().unwrap(),
                    "the snapshot is not older than what was seen"
                );
                seqs.push(seq);
                resynced = Some(seq);
            }
        }
    }
    assert!(killed && resynced.is_some(), "reconnected: {seqs:?}");
    let mut unique = items.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        items.len(),
        "a timeline item came twice: {items:?}"
    );
    // Nothing stopped on the host: the agent ran to its end, and its whole timeline is there.
    let page = match client
        .call(Request::Timeline(paseo_core::api::verbs::Timeline {
            agent_id: id,
            before: None,
            limit: Some(500),
        }))
        .await
        .unwrap()
    {
        Response::Timeline(items) => items,
        other => panic!("{other:?}"),
    };
    let whole: String = page.iter().map(|i| format!("{}\n", i.text)).collect();
    for i in 1..=30 {
        assert!(
            whole.contains(&format!("tick-{i}\n")),
            "tick-{i} missing: {whole}"
        );
    }
}

/// A host key ssh has never seen (no known_hosts entry, default checking), and a login only a
/// password would open, with BatchMode: clear errors saying what to run in a terminal, not a
/// hang on a prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_time_host_key_or_a_password_login_is_a_clear_error_saying_what_to_run() {
    let Some(sshd) = Sshd::start("hostkey") else {
        return;
    };
    let error = HostClient::connect(sshd.host("newbox"), sshd.ssh_options())
        .await
        .err()
        .expect("ssh must refuse an unknown host key in batch mode");
    assert!(matches!(error, HostError::HostKey { .. }), "{error}");
    assert_eq!(error.code(), "ssh_host_key");
    assert!(
        error
            .to_string()
            .contains("run `ssh newbox` once in a terminal"),
        "{error}"
    );

    // A login that would need a password: the same, never a prompt.
    let error = HostClient::connect(sshd.host("nokey"), sshd.ssh_options())
        .await
        .err()
        .expect("no key the host knows");
    assert!(matches!(error, HostError::Auth { .. }), "{error}");
    assert!(error.to_string().contains("ssh-copy-id nokey"), "{error}");
}
