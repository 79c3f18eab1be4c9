//! Hosts from the app's side (SPEC 17), with real parts: this machine's app is a real
//! `paseo-headless` process with `hosts` in its config.json, reaching a real `sshd` on loopback
//! as a throwaway user (hosts_support) through the system `ssh` and an ssh config Host alias
//! (`PASEO_SSH_CONFIG`); the tests speak to it as the user does, over MCP with the user's token
//! (curl), and read its hosts' states with `listHosts` through `paseo-headless attach` on its
//! own data root. No SSH stand-in, no stand-in for the app.

mod hosts_support;

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
        let me = self.pid();
        std::fs::read_dir("/proc").ok()?.find_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (comm, rest) = stat.split_once(") ")?;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == me && comm.ends_with("(ssh")).then_some(pid)
        })
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
            HostEvent::Event { host, event } => {
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
