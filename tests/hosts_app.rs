//! Hosts from the app's side (SPEC 17), with real parts: this machine's app is a real
//! `paseo-headless` process with `hosts` in its config.json, reaching a real `sshd` on loopback
//! as a throwaway user (hosts_support) through the system `ssh` and an ssh config Host alias
//! (`PASEO_SSH_CONFIG`); the tests speak to it as the user does, over MCP with the user's token
//! (curl), and read its hosts' states with `listHosts` through `paseo-headless attach` on its
//! own data root. No SSH stand-in, no stand-in for the app.

mod hosts_support;

use paseo_core::server::Runtime;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hosts_support::{alive, stop_pid, Sshd, HEADLESS};
use serde_json::{json, Value};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const WAIT: Duration = Duration::from_secs(60);

/// This machine's app: `paseo-headless` on its own data root, with the host `box` configured.
struct App {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    ssh_config: PathBuf,
    child: Option<Child>,
}

impl App {
    fn start(sshd: &Sshd) -> App {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("paseo");
        let work = base.join("work");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(
            root.join("config.json"),
            json!({"mcp": {"port": 0}, "hosts": [{"name": "box", "ssh": "box"}]}).to_string(),
        )
        .unwrap();
        let mut app = App {
            _dir: dir,
            root,
            work,
            ssh_config: sshd.dir.path().join("ssh_config"),
            child: None,
        };
        app.launch();
        app
    }

    fn launch(&mut self) {
        let _ = std::fs::remove_file(self.root.join("mcp.json"));
        let child = Command::new(HEADLESS)
            .env("PASEO_HOME", &self.root)
            .env("PASEO_SSH_CONFIG", &self.ssh_config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_for("the app's mcp.json", || {
            self.root.join("mcp.json").exists().then_some(())
        });
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    fn kill_hard(&mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// One MCP tool call with `token` (default: the user's): whether it failed, its text,
    /// its structured content.
    fn mcp_as(&self, token: Option<&str>, tool: &str, args: Value) -> (bool, String, Value) {
        let url: Value =
            serde_json::from_slice(&std::fs::read(self.root.join("mcp.json")).unwrap()).unwrap();
        let user = std::fs::read_to_string(self.root.join("mcp-token")).unwrap();
        let token = token.unwrap_or(user.trim()).to_string();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let out = Command::new("curl")
            .args([
                "-sS",
                "-N",
                "--fail-with-body",
                url["url"].as_str().unwrap(),
            ])
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .args(["-H", "Content-Type: application/json"])
            .args(["-H", "Accept: application/json, text/event-stream"])
            .args(["-d", &body.to_string()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let data = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or_else(|| panic!("{tool}: no SSE data in {text}"));
        let v: Value = serde_json::from_str(data).unwrap();
        let said = v["result"]["content"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|t| t["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        (
            v["result"]["isError"] == true,
            said,
            v["result"]["structuredContent"].clone(),
        )
    }

    fn mcp(&self, tool: &str, args: Value) -> Value {
        let (failed, said, value) = self.mcp_as(None, tool, args.clone());
        assert!(!failed, "{tool} {args}: {said}");
        value
    }

    /// `listHosts` through `paseo-headless attach` on this app's data root; `None` while the
    /// app's socket is not up yet.
    fn hosts(&self) -> Option<Value> {
        let mut attach = Command::new(HEADLESS)
            .arg("attach")
            .env("PASEO_HOME", &self.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = attach.stdin.take().unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"type": "hello", "product": VERSION, "protocol": 1})
        )
        .unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"type": "request", "id": 1, "request": {"kind": "listHosts"}})
        )
        .unwrap();
        let mut lines = BufReader::new(attach.stdout.take().unwrap()).lines();
        let answer = loop {
            let Some(Ok(line)) = lines.next() else {
                break None;
            };
            let frame: Value = serde_json::from_str(&line).unwrap();
            if frame["type"] == "response" && frame["id"] == 1 {
                break Some(frame["response"]["value"].clone());
            }
            assert_ne!(frame["type"], "error", "{frame}");
        };
        drop(stdin);
        let _ = attach.wait();
        answer
    }

    /// Waits until the host `box` is in `state`; returns its entry.
    fn wait_host(&self, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        wait_for(what, || {
            let the = self.hosts()?[0].clone();
            check(&the).then_some(the)
        })
    }

    /// The ssh process carrying the app's connection to its host.
    fn ssh_child(&self) -> Option<u32> {
        hosts_support::ssh_child(self.pid())
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            stop_pid(child.id());
        }
    }
}

fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The host has this build's paseo-headless (installed over ssh as the install path does).
fn installed(sshd: &Sshd) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(paseo_core::hosts::install(
        &sshd.host("box"),
        &sshd.ssh_options(),
        Path::new(HEADLESS),
    ))
    .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
}

/// The host's backend is stopped at the end (it outlives ssh by design).
fn adopt_backend(sshd: &mut Sshd) {
    if let Some(pid) = sshd.host_backend() {
        if !sshd.backends.contains(&pid) {
            sshd.backends.push(pid);
        }
    }
}

fn create_on_host(app: &App, sshd: &Sshd, prompt: &str) -> (String, Value) {
    let created = app.mcp(
        "create_agent",
        json!({"provider": "shell", "host": "box", "initialPrompt": prompt,
            "relationship": {"kind": "detached"},
            "workspace": {"kind": "create", "source": {"kind": "directory",
                "path": sshd.user.home.display().to_string()}}}),
    );
    (created["agentId"].as_str().unwrap().to_string(), created)
}

fn file_of(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Whether the host's own record of `id` (in the host user's data root) says its turn ended:
/// what happened on the host, read there, not through the app.
fn idle_on_host(home: &Path, id: &str) -> Option<()> {
    let agents = std::fs::read_dir(home.join(".paseo/agents")).ok()?;
    agents.flatten().find_map(|project| {
        let text = std::fs::read_to_string(project.path().join(format!("{id}.json"))).ok()?;
        let record: Value = serde_json::from_str(&text).ok()?;
        (record["lastStatus"] == "idle").then_some(())
    })
}

fn ids(list: &Value) -> Vec<(String, Option<String>)> {
    list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["id"].as_str().unwrap().to_string(),
                a["host"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// The whole way through the user's MCP: a configured host connects at the app's start;
/// `create_agent` with `host` runs a shell agent there as the host's user; `list_agents`
/// tags it and filters by host; `get_agent`, `send_agent_prompt` and `archive_agent` find it
/// by its id alone; an agent's token asking for the host, or for the host's agent, is refused.
#[test]
fn the_users_mcp_runs_and_drives_an_agent_on_a_configured_host() {
    let Some(mut sshd) = Sshd::start("app") else {
        return;
    };
    installed(&sshd);
    let app = App::start(&sshd);
    let box_ = app.wait_host("box connected", |h| h["state"] == "connected");
    assert_eq!(
        (box_["name"].as_str(), box_["ssh"].as_str()),
        (Some("box"), Some("box"))
    );
    adopt_backend(&mut sshd);

    let home = sshd.user.home.clone();
    let (id, created) = create_on_host(&app, &sshd, "echo host-$(id -un) > proof");
    assert_eq!(created["cwd"], home.display().to_string());
    let proof = home.join("proof");
    let said = wait_for("the host agent's file", || file_of(&proof));
    assert_eq!(said, format!("host-{}", sshd.user.name));
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&proof).unwrap().uid(), sshd.user.uid);

    // A local agent beside it: it writes its own MCP token where the test reads it.
    let local = app.mcp(
        "create_agent",
        json!({"provider": "shell", "initialPrompt": "echo $PASEO_MCP_TOKEN > token",
            "relationship": {"kind": "detached"},
            "workspace": {"kind": "create", "source": {"kind": "directory",
                "path": app.work.display().to_string()}}}),
    );
    let local_id = local["agentId"].as_str().unwrap().to_string();
    let token = wait_for("the local agent's token", || {
        file_of(&app.work.join("token"))
    });

    let all = ids(&app.mcp("list_agents", json!({})));
    assert!(all.contains(&(id.clone(), Some("box".into()))), "{all:?}");
    assert!(all.contains(&(local_id.clone(), None)), "{all:?}");
    let there = ids(&app.mcp("list_agents", json!({"host": "box"})));
    assert_eq!(there, vec![(id.clone(), Some("box".into()))]);

    let got = app.mcp("get_agent", json!({"agentId": id}));
    assert_eq!(got["cwd"], home.display().to_string());
    app.mcp(
        "wait_for_agent",
        json!({"agentId": id, "timeoutSeconds": 30}),
    );
    let again = app.mcp(
        "send_agent_prompt",
        json!({"agentId": id, "prompt": "echo again-$(id -un) > proof2", "background": false}),
    );
    assert_eq!(again["agentId"], id.as_str());
    assert_eq!(
        wait_for("the second prompt's file", || file_of(&home.join("proof2"))),
        format!("again-{}", sshd.user.name)
    );

    // The local agent's token reaches neither the host nor the host's agent.
    let (failed, said, _) = app.mcp_as(
        Some(&token),
        "create_agent",
        json!({"provider": "shell", "host": "box", "initialPrompt": "echo escaped > escaped",
            "relationship": {"kind": "detached"},
            "workspace": {"kind": "create", "source": {"kind": "directory",
                "path": home.display().to_string()}}}),
    );
    assert!(failed && said.starts_with("host: agent "), "{said}");
    assert!(said.contains("may not reach another machine"), "{said}");
    for (tool, args) in [
        ("get_agent", json!({"agentId": id})),
        (
            "send_agent_prompt",
            json!({"agentId": id, "prompt": "echo escaped > escaped"}),
        ),
        ("archive_agent", json!({"agentId": id})),
        ("list_agents", json!({"host": "box"})),
    ] {
        let (failed, said, _) = app.mcp_as(Some(&token), tool, args);
        assert!(failed, "{tool}: {said}");
        assert!(
            said.contains("may not reach another machine"),
            "{tool}: {said}"
        );
    }
    let own = ids(&app.mcp_as(Some(&token), "list_agents", json!({})).2);
    assert!(own.iter().all(|(a, h)| *a != id && h.is_none()), "{own:?}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!home.join("escaped").exists(), "nothing ran on the host");

    let archived = app.mcp("archive_agent", json!({"agentId": id}));
    assert_eq!(archived["archived"], json!([id]));
    let got = app.mcp("get_agent", json!({"agentId": id}));
    assert!(got["archivedAt"].is_string(), "{got}");
    let there = ids(&app.mcp("list_agents", json!({"host": "box"})));
    assert!(there.is_empty(), "{there:?}");
}

/// Killing the app's ssh process stops nothing on the host: the host shows `disconnected`
/// (with when it was last seen) while it cannot reconnect, then `connected` again, and the
/// mirror is rebuilt from the new snapshot: the agent that finished meanwhile counts as
/// finished, none as running.
#[test]
fn a_killed_ssh_shows_disconnected_then_connected_with_the_mirror_resynced() {
    let Some(mut sshd) = Sshd::start("appssh") else {
        return;
    };
    installed(&sshd);
    let app = App::start(&sshd);
    app.wait_host("box connected", |h| h["state"] == "connected");
    adopt_backend(&mut sshd);
    let home = sshd.user.home.clone();
    let (id, _) = create_on_host(&app, &sshd, "sleep 4; echo done > finished");
    app.wait_host("the host agent running in the mirror", |h| {
        h["agents"] == 1 && h["counts"]["tally"]["running"] == 1
    });

    // No new login while sshd is stopped: the reconnect waits, the host shows disconnected.
    let sshd_pid = sshd.pid() as i32;
    // SAFETY: signals to the sshd this test started.
    unsafe { libc::kill(sshd_pid, libc::SIGSTOP) };
    let ssh = app.ssh_child().expect("the app's ssh");
    unsafe { libc::kill(ssh as i32, libc::SIGKILL) };
    let down = app.wait_host("box disconnected", |h| h["state"] == "disconnected");
    assert!(down["lastSeen"].is_string(), "{down}");
    assert!(
        !down["error"].as_str().unwrap_or_default().is_empty(),
        "{down}"
    );
    // Nothing on the host stopped: the agent finishes while the app is away.
    wait_for("the agent's file", || file_of(&home.join("finished")));
    wait_for("the host's record idle", || idle_on_host(&home, &id));
    unsafe { libc::kill(sshd_pid, libc::SIGCONT) };
    let up = app.wait_host("box connected again", |h| h["state"] == "connected");
    assert_eq!(up["agents"], 1, "{up}");
    assert_eq!(up["counts"]["tally"]["running"], 0, "resynced: {up}");
    assert_ne!(app.ssh_child(), Some(ssh));
    let got = app.mcp("get_agent", json!({"agentId": id}));
    assert_eq!(got["status"], "idle", "{got}");
}

/// The app SIGKILLed while a host agent runs: the agent finishes on the host, and the
/// restarted app connects at its start and mirrors it finished.
#[test]
fn the_app_killed_and_restarted_while_a_host_agent_runs_finds_it_finished() {
    let Some(mut sshd) = Sshd::start("apprestart") else {
        return;
    };
    installed(&sshd);
    let mut app = App::start(&sshd);
    app.wait_host("box connected", |h| h["state"] == "connected");
    adopt_backend(&mut sshd);
    let home = sshd.user.home.clone();
    let (id, _) = create_on_host(&app, &sshd, "sleep 3; echo done > finished");
    app.wait_host("the host agent running", |h| {
        h["counts"]["tally"]["running"] == 1
    });
    let backend = sshd.host_backend().expect("the host's backend");
    app.kill_hard();
    wait_for("the agent's file", || file_of(&home.join("finished")));
    wait_for("the host's record idle", || idle_on_host(&home, &id));
    assert!(alive(backend), "the host's backend outlived the app");
    app.launch();
    let up = app.wait_host("box connected after the restart", |h| {
        h["state"] == "connected"
    });
    assert_eq!(up["agents"], 1, "{up}");
    assert_eq!(up["counts"]["tally"]["running"], 0, "{up}");
    let got = app.mcp("get_agent", json!({"agentId": id}));
    assert_eq!(got["status"], "idle", "{got}");
    assert_eq!(sshd.host_backend(), Some(backend), "the same backend");
}

async fn next(
    events: &mut tokio::sync::broadcast::Receiver<paseo_core::hosts::HostEvent>,
) -> paseo_core::hosts::HostEvent {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("no host event within the wait")
        .unwrap()
}

/// The manager in the app's process (what the tray and the notifications read): a host's
/// events come tagged with its name, its agents are found by id and counted with this
/// machine's, and one that finished alerts, as the tray lists it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_events_come_tagged_and_its_agents_count_and_alert() {
    use paseo_core::api::{Event, Request, Response};
    use paseo_core::hosts::{HostEvent, HostManager, HostState};
    use paseo_core::model::FleetCounts;
    let Some(mut sshd) = Sshd::start("appevents") else {
        return;
    };
    paseo_core::hosts::install(&sshd.host("box"), &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    let dir = tempfile::tempdir().unwrap();
    let manager = std::sync::Arc::new(HostManager::new(dir.path()));
    let mut events = manager.subscribe();
    manager.start(&[sshd.host("box")], sshd.ssh_options());
    loop {
        if let HostEvent::State { host, state } = next(&mut events).await {
            assert_eq!(host, "box");
            if state == HostState::Connected {
                break;
            }
        }
    }
    adopt_backend(&mut sshd);
    let request = Request::from_value(json!({
        "kind": "createAgent", "provider": "shell",
        "workspace": {"kind": "directory", "path": sshd.user.home.display().to_string()},
        "prompt": "echo tagged",
    }))
    .unwrap();
    let Response::Agent(created) = manager.client("box").unwrap().call(request).await.unwrap()
    else {
        panic!("not an agent")
    };
    let id = created.id();
    // Its events, tagged, until it finished.
    loop {
        match next(&mut events).await {
            HostEvent::Event { host, event, .. } => {
                assert_eq!(host, "box");
                if let Event::AgentUpdated { agent } = *event {
                    if agent.id() == id && agent.alert.is_some() {
                        break;
                    }
                }
            }
            HostEvent::State { state, .. } => panic!("{state:?}"),
        }
    }
    // Its counts follow at the host's next tick.
    loop {
        if let HostEvent::Event { event, .. } = next(&mut events).await {
            if let Event::CountsChanged { counts } = *event {
                if counts.tally.total == 1 && counts.tally.running == 0 {
                    break;
                }
            }
        }
    }
    assert_eq!(manager.holder(id).as_deref(), Some("box"));
    let alerts = manager.alerts();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!((alerts[0].0.as_str(), alerts[0].1.id()), ("box", id));
    let mut here = FleetCounts::default();
    here.add(paseo_core::model::Bucket::Running, false);
    let all = manager.counts_with(here);
    assert_eq!((all.tally.total, all.tally.running), (2, 1), "{all:?}");
}

/// This machine's runtime in the test's process with the hosts of `names` configured: the
/// router, the manager and the window's payloads are the ones the desktop app runs
/// (src-tauri/desktop.rs only emits what `HostEvent::for_window` gives).
struct InProcess {
    _dir: tempfile::TempDir,
    runtime: Option<paseo_core::server::Runtime>,
    rt: paseo_core::server::Server,
    events: tokio::sync::broadcast::Receiver<paseo_core::hosts::HostEvent>,
}

impl InProcess {
    async fn start(sshd: &Sshd, names: &[&str]) -> InProcess {
        use paseo_core::config::Config;
        use paseo_core::providers::ProviderRegistry;
        use paseo_core::runtime::RuntimeOptions;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("paseo");
        std::fs::create_dir_all(&root).unwrap();
        let registry = ProviderRegistry::from_config(&Config::default());
        let runtime = Runtime::start(RuntimeOptions::new(&root, registry), None)
            .await
            .unwrap();
        let rt = runtime.handle();
        let events = rt.hosts().subscribe();
        let hosts: Vec<_> = names.iter().map(|n| sshd.host(n)).collect();
        rt.hosts().start(&hosts, sshd.ssh_options());
        InProcess {
            _dir: dir,
            runtime: Some(runtime),
            rt,
            events,
        }
    }

    async fn user(
        &self,
        request: Value,
    ) -> Result<paseo_core::api::Response, paseo_core::api::ApiError> {
        self.as_caller(paseo_core::api::Caller::User, request).await
    }

    async fn as_caller(
        &self,
        caller: paseo_core::api::Caller,
        request: Value,
    ) -> Result<paseo_core::api::Response, paseo_core::api::ApiError> {
        let request = paseo_core::api::Request::from_value(request).unwrap();
        self.rt.call(caller, request).await.map_err(Into::into)
    }

    /// The next host event as a window gets it: the Tauri event's name and its payload.
    async fn next_for_window(&mut self) -> (String, Value, paseo_core::hosts::HostEvent) {
        let event = next(&mut self.events).await;
        let (name, payload) = event.for_window();
        let payload = serde_json::to_value(payload).unwrap();
        (name.to_string(), payload, event)
    }

    /// Host states (as windows get them) until `host` is in `state`: the payloads seen.
    async fn until_state(&mut self, host: &str, state: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let (name, payload, _) = self.next_for_window().await;
            if name != paseo_core::hosts::window::HOST_STATE || payload["host"] != host {
                continue;
            }
            let done = payload["state"] == state;
            seen.push(payload);
            if done {
                return seen;
            }
        }
    }

    /// The answer's value as the window's `call` gives it (`{kind, value}`).
    async fn value(&self, request: Value) -> Value {
        let answer = self
            .user(request.clone())
            .await
            .unwrap_or_else(|e| panic!("{request}: {e:?}"));
        let text = answer.to_json().unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["value"].clone()
    }

    async fn stop(mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown().await;
        }
    }
}

/// A new folder in the host user's home, theirs (what an earlier run left there removed).
fn host_folder(sshd: &Sshd, name: &str) -> PathBuf {
    let path = sshd.user.home.join(name);
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    std::os::unix::fs::chown(&path, Some(sshd.user.uid), None).unwrap();
    path
}

/// The window's side of a host (SPEC 17): `syncSnapshot {host}` answers the host's own
/// snapshot with the number of the last event it reflects; the host's events come to the
/// windows on `paseo://event` as `{host, seq, event}` numbered after it, rising one by one,
/// each event exactly what this machine's would carry; states come as `paseo://host-state`
/// (connecting, connected, failed with its code, disconnected with when, connected again after
/// the ssh is killed); a host not configured or not connected is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_takes_a_hosts_snapshot_and_follows_its_numbered_events() {
    use paseo_core::api::Event;
    use paseo_core::hosts::window::{EVENT, HOST_STATE};
    use paseo_core::hosts::HostEvent;
    use paseo_core::runtime::window::WindowEvent;
    let Some(mut sshd) = Sshd::start("appwindow") else {
        return;
    };
    paseo_core::hosts::install(&sshd.host("box"), &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    let mut app = InProcess::start(&sshd, &["box", "nokey"]).await;
    let states = app.until_state("box", "connected").await;
    assert_eq!(states[0], json!({"host": "box", "state": "connecting"}));
    adopt_backend(&mut sshd);
    let failed = app.until_state("nokey", "failed").await;
    let failed = failed.last().unwrap();
    assert_eq!(failed["code"], "ssh_auth", "{failed}");
    assert_eq!(failed["installHelps"], false, "{failed}");
    assert!(
        failed["error"].as_str().unwrap().contains("ssh-copy-id"),
        "{failed}"
    );

    // The host's snapshot, as the local one is shaped: the host's data root, its fleet.
    let synced = app
        .value(json!({"kind": "syncSnapshot", "host": "box"}))
        .await;
    let first_seq = synced["seq"].as_u64().expect("seq");
    let window = &synced["window"];
    let host_root = sshd.user.home.join(".paseo").display().to_string();
    assert_eq!(window["home"], host_root.as_str(), "{window}");
    for key in ["agents", "workspaces", "projects", "tracks", "counts"] {
        assert!(!window[key].is_null(), "{key} in {window}");
    }
    let here = app.value(json!({"kind": "syncSnapshot"})).await;
    assert_ne!(here["window"]["home"], host_root.as_str());

    let e = app
        .user(json!({"kind": "syncSnapshot", "host": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.field.as_deref()),
        ("invalid", Some("host")),
        "{e:?}"
    );
    let e = app
        .user(json!({"kind": "syncSnapshot", "host": "nokey"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, "disconnected", "{e:?}");

    // An agent made on the host: its events follow the snapshot's number, one by one.
    let created = app
        .value(
            json!({"kind": "createAgent", "host": "box", "provider": "shell",
            "workspace": {"kind": "directory", "path": sshd.user.home.display().to_string()},
            "prompt": "echo numbered"}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_string();
    let mut last: Option<u64> = None;
    let mut about_it = 0;
    loop {
        let (name, payload, event) = app.next_for_window().await;
        let HostEvent::Event { seq, event, .. } = event else {
            panic!("a state while connected: {payload}");
        };
        assert_eq!(name, EVENT);
        assert_eq!(payload["host"], "box");
        assert_eq!(payload["seq"], seq);
        assert_eq!(
            payload["event"],
            serde_json::to_value(WindowEvent(&event)).unwrap()
        );
        if let Some(last) = last {
            assert_eq!(seq, last + 1, "numbered one by one");
        }
        last = Some(seq);
        if let Event::AgentUpdated { agent } = &*event {
            if agent.id().to_string() == id {
                assert!(seq > first_seq, "{seq} after the snapshot's {first_seq}");
                // A card, as the local window's events carry it.
                assert_eq!(payload["event"]["agent"]["id"], id.as_str());
                assert!(
                    payload["event"]["agent"]["statusWord"].is_string(),
                    "{payload}"
                );
                about_it += 1;
                if agent.alert.is_some() {
                    break;
                }
            }
        }
    }
    assert!(about_it >= 2, "created and finished");
    let last = last.unwrap();
    let again = app
        .value(json!({"kind": "syncSnapshot", "host": "box"}))
        .await;
    let seq = again["seq"].as_u64().unwrap();
    assert!(
        seq >= last,
        "the snapshot's number counts the same events: {seq} < {last}"
    );
    let ids: Vec<&str> = again["window"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["id"].as_str())
        .collect();
    assert!(ids.contains(&id.as_str()), "{ids:?}");

    // A killed ssh: disconnected with when, then connected (its mirror rebuilt), and the
    // snapshot again.
    let ssh = app.rt.hosts().client("box").unwrap().ssh_pid().unwrap();
    // SAFETY: a signal to the ssh this test's manager started.
    unsafe { libc::kill(ssh as i32, libc::SIGKILL) };
    let states = app.until_state("box", "connected").await;
    let down = states
        .iter()
        .find(|s| s["state"] == "disconnected")
        .unwrap_or_else(|| panic!("{states:?}"));
    assert!(
        down["lastSeen"].is_string() && down["error"].is_string(),
        "{down}"
    );
    assert!(states.iter().all(|s| s["host"] == "box"));
    let after = app
        .value(json!({"kind": "syncSnapshot", "host": "box"}))
        .await;
    assert!(after["seq"].as_u64().unwrap() >= seq);
    assert_eq!(after["window"]["home"], host_root.as_str());
    // Every state payload is named as the windows listen for it.
    let (name, _) = HostEvent::State {
        host: "box".into(),
        state: paseo_core::hosts::HostState::Connected,
    }
    .for_window();
    assert_eq!(name, HOST_STATE);
    app.stop().await;
}

/// Requests naming a host's workspace go to that host like its agents' do (SPEC 17): the
/// manager learns the host's workspaces from its snapshot and its events (these ones made by
/// another client of the host, not this app). `addWorkspace`, `createWorktree` and
/// `archivedAgents` with `host`, and `createAgent` into a host's workspace, run there;
/// `setBudget` of a host's agent too. An agent caller naming the host or a host's workspace or
/// agent is refused and nothing changes on the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_workspaces_and_budgets_route_there_and_agents_are_refused() {
    use paseo_core::api::{Caller, Request, Response};
    use paseo_core::model::AgentId;
    let Some(mut sshd) = Sshd::start("appworkspaces") else {
        return;
    };
    paseo_core::hosts::install(&sshd.host("box"), &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    // Another client of the host (another app): what it makes, this app learns of.
    let (other, _updates) =
        paseo_core::hosts::HostClient::connect(sshd.host("box"), sshd.ssh_options())
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    adopt_backend(&mut sshd);
    let add = |path: PathBuf| {
        Request::AddWorkspace(paseo_core::api::verbs::AddWorkspace {
            path: path.display().to_string(),
            host: None,
        })
    };
    let Response::Workspace(one) = other.call(add(host_folder(&sshd, "one"))).await.unwrap() else {
        panic!("not a workspace")
    };
    let one = one.record.workspace_id.to_string();

    let mut app = InProcess::start(&sshd, &["box"]).await;
    app.until_state("box", "connected").await;
    // Learnt from the snapshot.
    let renamed = app
        .value(json!({"kind": "renameWorkspace", "workspaceId": one, "name": "first"}))
        .await;
    assert_eq!(renamed["name"], "first", "{renamed}");

    // Learnt from an event.
    let Response::Workspace(two) = other.call(add(host_folder(&sshd, "two"))).await.unwrap() else {
        panic!("not a workspace")
    };
    let two = two.record.workspace_id.clone();
    wait_for("the host's new workspace in the mirror", || {
        app.rt.hosts().workspace_holder(&two)
    });
    let two = two.to_string();

    // An agent's token reaches none of it; nothing changes on the host.
    let agent = Caller::Agent(AgentId::new());
    let two_dir = sshd.user.home.join("two");
    for (request, field) in [
        (json!({"kind": "syncSnapshot", "host": "box"}), "host"),
        (json!({"kind": "archivedAgents", "host": "box"}), "host"),
        (
            json!({"kind": "addWorkspace", "host": "box",
                "path": host_folder(&sshd, "three").display().to_string()}),
            "host",
        ),
        (
            json!({"kind": "renameWorkspace", "workspaceId": one, "name": "agent's"}),
            "workspaceId",
        ),
        (
            json!({"kind": "archiveWorkspace", "workspaceId": two}),
            "workspaceId",
        ),
        (
            json!({"kind": "listAgents", "workspaceId": two}),
            "workspaceId",
        ),
        (
            json!({"kind": "createAgent", "provider": "shell", "prompt": "echo escaped > escaped",
                "workspace": {"kind": "existing", "workspaceId": two}}),
            "workspace.workspaceId",
        ),
    ] {
        let e = app.as_caller(agent, request.clone()).await.unwrap_err();
        assert_eq!(e.code, "forbidden", "{request}: {e:?}");
        // The refusal names the field that reaches the host (its message's head).
        assert!(
            e.message.starts_with(&format!("{field}: ")),
            "{request}: {e:?}"
        );
        assert!(e.message.contains("may not reach another machine"), "{e:?}");
    }
    let host = app
        .value(json!({"kind": "syncSnapshot", "host": "box"}))
        .await;
    let names: Vec<(&str, Option<&str>)> = host["window"]["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["workspaceId"].as_str().unwrap(), w["name"].as_str()))
        .collect();
    assert!(names.contains(&(one.as_str(), Some("first"))), "{names:?}");
    assert!(names.iter().any(|(w, _)| *w == two), "{names:?}");
    assert_eq!(names.len(), 2, "no third workspace: {names:?}");
    assert!(!two_dir.join("escaped").exists());

    // The user's: an agent in the host's workspace named by id alone runs there, as the
    // host's user.
    let created = app
        .value(
            json!({"kind": "createAgent", "provider": "shell", "prompt": "echo there > there",
            "workspace": {"kind": "existing", "workspaceId": two}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["cwd"], two_dir.display().to_string());
    let there = wait_for("the agent's file on the host", || {
        file_of(&two_dir.join("there"))
    });
    assert_eq!(there, "there");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(two_dir.join("there")).unwrap().uid(),
        sshd.user.uid
    );
    let listed = app
        .value(json!({"kind": "listAgents", "workspaceId": two}))
        .await;
    let listed: Vec<&str> = listed["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["id"].as_str())
        .collect();
    assert_eq!(listed, vec![id.as_str()]);

    // Its budget, set from here, is the host's.
    let e = app
        .as_caller(
            agent,
            json!({"kind": "setBudget", "agentId": id, "budget": {"treeTokens": 1000}}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, "forbidden", "{e:?}");
    assert!(e.message.starts_with("agentId: agent "), "{e:?}");
    let budgeted = app
        .value(json!({"kind": "setBudget", "agentId": id, "budget": {"treeTokens": 1000}}))
        .await;
    assert_eq!(budgeted["id"], id.as_str());
    let Response::Agent(seen) = other
        .call(Request::GetAgent(paseo_core::api::verbs::GetAgent {
            agent_id: id.parse().unwrap(),
        }))
        .await
        .unwrap()
    else {
        panic!("not an agent")
    };
    let budget = serde_json::to_value(seen.record.budget).unwrap();
    assert_eq!(budget["treeTokens"], 1000, "the host's record: {budget}");

    // Added, archived and listed archived on the host by name.
    let three = app
        .value(json!({"kind": "addWorkspace", "host": "box",
            "path": host_folder(&sshd, "three").display().to_string()}))
        .await;
    assert_eq!(
        three["cwd"],
        sshd.user.home.join("three").display().to_string()
    );
    // A worktree of the host's repository, made there and renamed from here by its id.
    let repo = host_folder(&sshd, "repo");
    for args in [
        vec!["init", "-q", "-b", "main"],
        vec![
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "first",
        ],
    ] {
        let done = Command::new("git")
            .args(["-c", "safe.directory=*"])
            .arg("-C")
            .arg(&repo)
            .args(args)
            .status()
            .unwrap();
        assert!(done.success());
    }
    let chowned = Command::new("chown")
        .args(["-R", &sshd.user.uid.to_string()])
        .arg(&repo)
        .status()
        .unwrap();
    assert!(chowned.success());
    let tree = app
        .value(
            json!({"kind": "createWorktree", "host": "box", "repo": repo.display().to_string(),
            "target": {"kind": "branch-off", "newBranch": "on-box"}}),
        )
        .await;
    let tree_dir = tree["cwd"].as_str().unwrap();
    assert!(
        tree_dir.starts_with(&sshd.user.home.display().to_string()),
        "{tree}"
    );
    assert_eq!(tree["branch"], "on-box", "{tree}");
    let made = std::fs::metadata(tree_dir).unwrap();
    assert_eq!(made.uid(), sshd.user.uid, "made by the host's user");
    let renamed = app
        .value(
            json!({"kind": "renameWorkspace", "workspaceId": tree["workspaceId"], "name": "tree"}),
        )
        .await;
    assert_eq!(renamed["name"], "tree");

    let here = app.value(json!({"kind": "syncSnapshot"})).await;
    assert_eq!(
        here["window"]["workspaces"],
        json!([]),
        "nothing added here"
    );
    let archived = app
        .value(json!({"kind": "archiveWorkspace", "workspaceId": two, "evenIfRunning": true}))
        .await;
    assert_eq!(archived, json!([id]));
    let listed = app
        .value(json!({"kind": "archivedAgents", "host": "box"}))
        .await;
    assert_eq!(listed["agents"][0]["id"], id.as_str(), "{listed}");
    let here = app.value(json!({"kind": "archivedAgents"})).await;
    assert_eq!(here["total"], 0, "{here}");
    drop(other);
    app.stop().await;
}

/// An agent archived on the host before this app started is in no mirror of this app: listing
/// the host's archived agents (`archivedAgents {host}`, what the window's archived list asks)
/// tells the router where it lives, so its `timeline` and its `restore` then run on the host —
/// the host's own record says it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_archived_on_a_host_before_the_app_started_restores_there_once_listed() {
    let Some(mut sshd) = Sshd::start("apparchived") else {
        return;
    };
    paseo_core::hosts::install(&sshd.host("box"), &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    let folder = host_folder(&sshd, "far");

    // An earlier run of the app made it on the host and archived it there.
    let mut earlier = InProcess::start(&sshd, &["box"]).await;
    earlier.until_state("box", "connected").await;
    adopt_backend(&mut sshd);
    let created = earlier
        .value(
            json!({"kind": "createAgent", "host": "box", "provider": "shell",
            "workspace": {"kind": "directory", "path": folder.display().to_string()},
            "prompt": "echo said-on-box-$((30+3))"}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_string();
    let home = sshd.user.home.clone();
    wait_for("the agent's turn on the host", || idle_on_host(&home, &id));
    let archived = earlier
        .value(json!({"kind": "archive", "agentId": id}))
        .await;
    assert_eq!(archived, json!([id]));
    earlier.stop().await;
    let record = paseo_core::store::Layout::new(home.join(".paseo"))
        .record_path(&folder.display().to_string(), id.parse().unwrap());
    let on_disk = || -> Value { serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap() };
    assert!(on_disk()["archivedAt"].is_string(), "archived on the host");

    // This run has never seen it.
    let mut app = InProcess::start(&sshd, &["box"]).await;
    app.until_state("box", "connected").await;
    assert_eq!(app.rt.hosts().holder(id.parse().unwrap()), None);
    let listed = app
        .value(json!({"kind": "archivedAgents", "host": "box"}))
        .await;
    assert_eq!(listed["agents"][0]["id"], id.as_str(), "{listed}");
    assert_eq!(
        app.rt.hosts().holder(id.parse().unwrap()).as_deref(),
        Some("box")
    );
    let timeline = app
        .value(json!({"kind": "timeline", "agentId": id, "limit": 50}))
        .await;
    assert!(
        timeline.to_string().contains("said-on-box-33"),
        "the host's timeline: {timeline}"
    );
    let restored = app.value(json!({"kind": "restore", "agentId": id})).await;
    assert_eq!(restored, json!([id]));
    wait_for("the host's record restored", || {
        (!on_disk()["archivedAt"].is_string()).then_some(())
    });
    let here = app.value(json!({"kind": "archivedAgents"})).await;
    assert_eq!(here["total"], 0, "nothing of it here: {here}");
    app.stop().await;
}

/// SPEC 20 on a host: its schedules are its own (its config.json, its scheduler), changed and
/// run from this app through the routed schedule requests, and an agent's token reaches none of
/// them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_schedules_live_and_run_there() {
    use paseo_core::api::Caller;
    use paseo_core::model::AgentId;
    let Some(mut sshd) = Sshd::start("appschedules") else {
        return;
    };
    paseo_core::hosts::install(&sshd.host("box"), &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    let mut app = InProcess::start(&sshd, &["box"]).await;
    app.until_state("box", "connected").await;
    adopt_backend(&mut sshd);
    let folder = host_folder(&sshd, "nightly");
    let entry = json!({"name": "nightly", "every": "1h", "provider": "shell",
        "prompt": "echo ran >> ran.txt", "workspace": {"kind": "directory", "path": folder}});

    let saved = app
        .value(json!({"kind": "saveSchedule", "host": "box", "schedule": entry}))
        .await;
    assert_eq!(saved[0]["name"], "nightly", "{saved}");
    assert_eq!(saved[0]["words"], "every hour");
    // In the host's config.json: the host runs it, with or without this app.
    let config: Value =
        serde_json::from_slice(&std::fs::read(sshd.user.home.join(".paseo/config.json")).unwrap())
            .unwrap();
    assert_eq!(config["schedules"][0], entry);
    let listed = app
        .value(json!({"kind": "listSchedules", "host": "box"}))
        .await;
    assert_eq!(listed.as_array().unwrap().len(), 1);

    // Run now, there: one run on the host, labelled, its prompt run in the host's folder.
    app.value(json!({"kind": "runSchedule", "host": "box", "name": "nightly"}))
        .await;
    wait_for("the run's output on the host", || {
        std::fs::read_to_string(folder.join("ran.txt")).ok()
    });
    let runs = app
        .value(json!({"kind": "listAgents", "host": "box", "labels": {"schedule": "nightly"}}))
        .await;
    assert_eq!(runs["agents"].as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(
        runs["agents"][0]["cwd"],
        json!(folder.display().to_string()),
        "run on the host, in its folder: {runs}"
    );

    // An agent's token reaches none of it; nothing changes on the host.
    let agent = Caller::Agent(AgentId::new());
    for request in [
        json!({"kind": "listSchedules", "host": "box"}),
        json!({"kind": "runSchedule", "host": "box", "name": "nightly"}),
        json!({"kind": "deleteSchedule", "host": "box", "name": "nightly"}),
    ] {
        let e = app.as_caller(agent, request.clone()).await.unwrap_err();
        assert_eq!(e.code, "forbidden", "{request}: {e:?}");
    }
    let paused = app
        .value(json!({"kind": "pauseSchedule", "host": "box", "name": "nightly", "paused": true}))
        .await;
    assert_eq!(paused[0]["paused"], true);
    let left = app
        .value(json!({"kind": "deleteSchedule", "host": "box", "name": "nightly"}))
        .await;
    assert_eq!(left, json!([]));
    assert_eq!(
        std::fs::read_to_string(folder.join("ran.txt"))
            .unwrap()
            .lines()
            .count(),
        1,
        "run once"
    );
    app.stop().await;
}
