//! The red team (SPEC 16b): real contained shell agents, started the way every agent is, try
//! what an agent following a prompt injection would, on both engines (bubblewrap, Landlock),
//! against a real user session this test makes: an ssh-agent holding a key, a D-Bus session bus
//! in the runtime folder and one on an abstract socket, token variables, a home with secrets.
//! Each attempt must fail from inside the box, and the unconfined control shows the same
//! attempt succeeds from outside it (so a test cannot pass for a broken attempt).
//!
//! One test drives every attempt, engine after engine, because the session is the process's
//! own environment (set once, before any runtime reads it), and the daemons live as long as
//! the thread that started them.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use paseo_core::config::{Config, EngineChoice, SandboxConfig};
use paseo_core::mcp::{McpServer, RunningMcp};
use paseo_core::model::{AgentId, ItemKind, Status, WorkspaceId};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Caller, CreateAgent, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};
use paseo_core::store::Layout;
use paseo_core::workspaces::worktree::WorktreeTarget;
use support::Door;

const T: Duration = Duration::from_secs(30);

/// The user's session the attacks aim at.
struct Session {
    root: PathBuf,
    home: PathBuf,
    ssh_sock: PathBuf,
    bus: PathBuf,
    abstract_bus: String,
    daemons: Vec<Child>,
}

impl Drop for Session {
    fn drop(&mut self) {
        for d in &mut self.daemons {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits until `path` exists (a daemon's socket).
fn until_exists(path: &Path) {
    for _ in 0..500 {
        if path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never appeared", path.display());
}

fn session(dir: &Path) -> Session {
    let root = dir.canonicalize().unwrap();
    let home = root.join("home");
    let runtime = root.join("run-user");
    let ssh_dir = root.join("ssh-agent-dir");
    for d in [&home, &runtime, &ssh_dir, &home.join(".ssh")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519.secret"), "PRIVATE-KEY-BYTES").unwrap();
    let mut daemons = Vec::new();
    // ssh-agent holding a key.
    let ssh_sock = ssh_dir.join("agent.sock");
    daemons.push(
        Command::new("ssh-agent")
            .args(["-D", "-a"])
            .arg(&ssh_sock)
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    until_exists(&ssh_sock);
    let key = root.join("key");
    run(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "redteam-key", "-f"])
        .arg(&key));
    run(Command::new("ssh-add")
        .arg(&key)
        .env("SSH_AUTH_SOCK", &ssh_sock));
    // A D-Bus session bus in the runtime folder, and one on an abstract socket.
    let bus = runtime.join("bus");
    let abstract_bus = format!("paseo-redteam-{}", std::process::id());
    for address in [
        format!("unix:path={}", bus.display()),
        format!("unix:abstract={abstract_bus}"),
    ] {
        daemons.push(
            Command::new("dbus-daemon")
                .args(["--session", "--nofork", "--nopidfile"])
                .arg(format!("--address={address}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    until_exists(&bus);
    // The session's environment, before any runtime reads it (this binary runs one test).
    std::env::set_var("HOME", &home);
    std::env::set_var("XDG_RUNTIME_DIR", &runtime);
    std::env::set_var("SSH_AUTH_SOCK", &ssh_sock);
    std::env::set_var(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", bus.display()),
    );
    std::env::set_var("GITHUB_TOKEN", "ghp_REDTEAMTOKENVALUE");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "AWS-REDTEAM-SECRET");
    // Let the abstract bus come up.
    std::thread::sleep(Duration::from_millis(200));
    Session {
        root,
        home,
        ssh_sock,
        bus,
        abstract_bus,
        daemons,
    }
}

/// A runtime on `data` with the MCP server (agents create children with their own token).
struct Rt {
    rt: Runtime,
    _mcp: RunningMcp,
    data: PathBuf,
}

async fn runtime(data: &Path, sandbox: SandboxConfig) -> Rt {
    std::fs::create_dir_all(data).unwrap();
    let server = McpServer::bind(&Layout::new(data), None).unwrap();
    let mut opts = RuntimeOptions::new(data, ProviderRegistry::from_config(&Config::default()));
    opts.sandbox = sandbox;
    let rt = Runtime::start(opts, Some(server.access())).await.unwrap();
    let mcp = server.serve(rt.handle()).await.unwrap();
    rt.handle.deliver_pending().await.unwrap();
    Rt {
        rt,
        _mcp: mcp,
        data: data.canonicalize().unwrap(),
    }
}

async fn workspace(h: &Server, dir: &Path) -> WorkspaceId {
    h.add_workspace(dir.display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id
}

/// Runs `script` as a shell agent's first turn in `ws`: its status and its output.
async fn attempt(
    h: &Server,
    ws: &WorkspaceId,
    script: &str,
    unconfined: bool,
) -> (AgentId, Status, String) {
    let id = start_attempt(h, ws, script, unconfined).await;
    finish_attempt(h, id).await
}

/// Starts `script` as a shell agent's first turn in `ws` (an attempt looked at while it runs).
async fn start_attempt(h: &Server, ws: &WorkspaceId, script: &str, unconfined: bool) -> AgentId {
    let mut req = CreateAgent::new("shell", WorkspaceTarget::existing(ws.clone()));
    req.initial_prompt = Some(script.to_string());
    req.unconfined = unconfined;
    h.create(req).await.unwrap().record.id
}

/// Waits for an attempt's turn to end: its status and its output.
async fn finish_attempt(h: &Server, id: AgentId) -> (AgentId, Status, String) {
    let r = h.wait(id, T).await.unwrap();
    assert!(!r.timed_out, "the turn ended");
    (id, r.agent.status, printed(h, id).await)
}

/// The sessions (as this process sees them) of the processes running exactly `argv`.
fn sessions_of(argv: &[&str]) -> Vec<i32> {
    let want = argv.iter().map(|a| format!("{a}\0")).collect::<String>();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|p| std::fs::read(p.path().join("cmdline")).is_ok_and(|c| c == want.as_bytes()))
        .filter_map(|p| {
            let stat = std::fs::read_to_string(p.path().join("stat")).ok()?;
            let after = &stat[stat.rfind(')')? + 1..];
            after.split_whitespace().nth(3)?.parse().ok()
        })
        .collect()
}

/// What an agent's turns printed (its output and errors, not the prompts it was sent).
async fn printed(h: &Server, id: AgentId) -> String {
    h.timeline(id, 0, 500)
        .await
        .unwrap()
        .iter()
        .filter(|i| i.kind != ItemKind::User)
        .map(|i| i.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

fn git(dir: &Path, args: &[&str]) -> String {
    run(Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args))
}

fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("README"), "hi\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// What failed, by attempt, across the run: every attempt is tried and reported at once.
#[derive(Default)]
struct Findings(Vec<String>);

impl Findings {
    fn check(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            self.0.push(what.into());
        }
    }
}

#[tokio::test]
async fn a_hostile_agent_reaches_nothing_of_the_users_session_on_either_engine() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    let mut f = Findings::default();
    controls(&s, &mut f).await;
    for engine in [EngineChoice::Bubblewrap, EngineChoice::Landlock] {
        attacks(&s, engine, &mut f).await;
        cli_state(&s, engine, &mut f);
    }
    assert!(
        f.0.is_empty(),
        "the box did not hold:\n- {}",
        f.0.join("\n- ")
    );
}

/// The same attempts from an unconfined agent (the user's choice) succeed: the session the
/// attacks aim at is real.
async fn controls(s: &Session, f: &mut Findings) {
    let rt = runtime(&s.root.join("data-control"), SandboxConfig::default()).await;
    let h = rt.rt.handle();
    let work = s.root.join("control-work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = workspace(&h, &work).await;
    let (_, _, out) = attempt(
        &h,
        &ws,
        &format!(
            "ssh-add -l; dbus-send --bus='unix:path={}' --print-reply --dest=org.freedesktop.DBus \
             /org/freedesktop/DBus org.freedesktop.DBus.ListNames | head -3; \
             dbus-send --bus='unix:abstract={}' --print-reply --dest=org.freedesktop.DBus \
             /org/freedesktop/DBus org.freedesktop.DBus.ListNames | head -3; echo \"gh=$GITHUB_TOKEN\"",
            s.bus.display(),
            s.abstract_bus
        ),
        true,
    )
    .await;
    f.check(
        out.contains("redteam-key"),
        format!("control: ssh-agent not reached: {out}"),
    );
    f.check(
        out.matches("array [").count() == 2,
        format!("control: the buses not reached: {out}"),
    );
    f.check(
        out.contains("gh=ghp_REDTEAMTOKENVALUE"),
        format!("control: no token: {out}"),
    );
    rt.rt.shutdown().await;
}

async fn attacks(s: &Session, engine: EngineChoice, f: &mut Findings) {
    let e = format!("{engine:?}");
    let sandbox = SandboxConfig {
        engine,
        ..SandboxConfig::default()
    };
    let rt = runtime(&s.root.join(format!("data-{e}")), sandbox.clone()).await;
    let h = rt.rt.handle();
    std::fs::write(rt.data.join("mcp-token-copy"), "USER-TOKEN-VALUE").unwrap();
    let project = s.home.join(format!("src/app-{e}"));
    repo(&project);
    let ws = workspace(&h, &project).await;

    // The session: ssh-agent, both buses, the token variables.
    let (_, _, out) = attempt(
        &h,
        &ws,
        &format!(
            "echo \"sock=$SSH_AUTH_SOCK bus=$DBUS_SESSION_BUS_ADDRESS gh=$GITHUB_TOKEN \
             aws=$AWS_SECRET_ACCESS_KEY id=$PASEO_AGENT_ID\"; \
             SSH_AUTH_SOCK='{ssh}' ssh-add -l; \
             dbus-send --bus='unix:path={bus}' --print-reply --dest=org.freedesktop.DBus \
             /org/freedesktop/DBus org.freedesktop.DBus.ListNames; \
             dbus-send --bus='unix:abstract={abs}' --print-reply --dest=org.freedesktop.DBus \
             /org/freedesktop/DBus org.freedesktop.DBus.ListNames; \
             ls '{run}'; echo end",
            ssh = s.ssh_sock.display(),
            bus = s.bus.display(),
            abs = s.abstract_bus,
            run = s.bus.parent().unwrap().display(),
        ),
        false,
    )
    .await;
    f.check(
        out.contains("end"),
        format!("{e}: the session attempt did not run: {out}"),
    );
    f.check(
        !out.contains("redteam-key"),
        format!("{e}: reached the ssh-agent: {out}"),
    );
    f.check(
        !out.contains("array ["),
        format!("{e}: reached a D-Bus session bus: {out}"),
    );
    f.check(
        !out.contains("ghp_REDTEAMTOKENVALUE") && !out.contains("AWS-REDTEAM-SECRET"),
        format!("{e}: read a token variable: {out}"),
    );
    f.check(
        out.contains("sock= bus= gh= aws= id="),
        format!("{e}: the session's variables were passed: {out}"),
    );

    // git's program-running files, planted for the user's own git to run later.
    let marker = s.root.join(format!("planted-{e}"));
    let (_, _, out) = attempt(
        &h,
        &ws,
        &format!(
            "git config core.fsmonitor 'touch {m}' || echo config-refused; \
             git config remote.origin.receivepack 'touch {m}' || echo receivepack-refused; \
             printf '#!/bin/sh\\ntouch {m}\\n' > .git/hooks/pre-commit || echo hook-refused; \
             printf '* filter=x\\n' > .git/info/attributes || echo attributes-refused; \
             echo change >> README; echo end",
            m = marker.display()
        ),
        false,
    )
    .await;
    // Under Landlock this stays open (its rules only grant, so a repository's git dir cannot
    // be writable but for its config and hooks): the status bar and docs/security.md say so,
    // and this checks that they still do.
    if engine == EngineChoice::Landlock {
        let said = h.snapshot().await.unwrap().containment.message;
        f.check(
            said.contains("git config and hooks"),
            format!("{e}: the status bar does not name the git gap: {said}"),
        );
    } else {
        f.check(
            [
                "config-refused",
                "receivepack-refused",
                "hook-refused",
                "attributes-refused",
            ]
            .iter()
            .all(|w| out.contains(w)),
            format!("{e}: planted git config, a hook or attributes: {out}"),
        );
        // The user's own git in that repository runs nothing the agent wrote.
        git(&project, &["status", "--porcelain"]);
        git(&project, &["commit", "-qam", "user's commit"]);
        f.check(
            !marker.exists(),
            format!("{e}: the user's git ran what the agent planted"),
        );
    }

    // A `.git` file naming the data root, then a same-power child there with the agent's own
    // token: the child's box does not open the data root.
    let (_, _, out) = attempt(
        &h,
        &ws,
        &format!(
            "mkdir -p sub && printf 'gitdir: %s\\n' '{data}' > sub/.git && \
             curl -sS -N \"$PASEO_MCP_URL\" -H \"Authorization: Bearer $PASEO_MCP_TOKEN\" \
             -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
             --data-binary '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"create_agent\",\"arguments\":{{\"provider\":\"shell\",\"title\":\"reader\",\"initialPrompt\":\"cat {data}/mcp-token-copy; echo child-end\",\"relationship\":{{\"kind\":\"subagent\"}},\"workspace\":{{\"kind\":\"current\",\"cwd\":\"{sub}\"}}}}}}}}' \
             | grep -o '\"agentId[^,]*'; echo end",
            data = rt.data.display(),
            sub = project.join("sub").display(),
        ),
        false,
    )
    .await;
    f.check(
        out.contains("agentId"),
        format!("{e}: the child was not created: {out}"),
    );
    let kids = support::eventually(T, || async {
        let (kids, _) = h
            .list(paseo_core::engine::ListFilter::default(), 1000)
            .await
            .unwrap();
        kids.into_iter()
            .find(|k| k.record.title == "reader")
            .ok_or_else(|| format!("no reader yet; the parent said: {out}"))
    })
    .await;
    let r = h.wait(kids.record.id, T).await.unwrap();
    let child_out = printed(&h, kids.record.id).await;
    f.check(
        !child_out.contains("USER-TOKEN-VALUE"),
        format!(
            "{e}: a child in a .git-redirected folder read the data root ({:?}): {child_out}",
            r.agent.status
        ),
    );

    // The same `.git` file in its own folder, then its own next session: still nothing.
    let plain = s.home.join(format!("plain-{e}"));
    std::fs::create_dir_all(&plain).unwrap();
    let pws = workspace(&h, &plain).await;
    let (id, _, _) = attempt(
        &h,
        &pws,
        &format!(
            "printf 'gitdir: %s\\n' '{}' > .git; echo planted",
            s.home.display()
        ),
        false,
    )
    .await;
    h.stop(id).await.unwrap();
    h.prompt(
        Caller::User,
        id,
        format!(
            "cat '{data}/mcp-token-copy'; echo x > '{home}/.bashrc' || echo home-refused; echo end",
            data = rt.data.display(),
            home = s.home.display()
        ),
        Some(true),
        None,
    )
    .await
    .unwrap();
    h.wait(id, T).await.unwrap();
    let out = printed(&h, id).await;
    f.check(
        !out.contains("USER-TOKEN-VALUE")
            && out.contains("home-refused")
            && !s.home.join(".bashrc").exists(),
        format!("{e}: its own next session got a wider box from its .git file: {out}"),
    );

    if engine == EngineChoice::Bubblewrap {
        held_and_worktrees(s, &h, &ws, &project, f).await;
    }

    // No terminal: its own session, so no keystrokes pushed into the app's terminal. The
    // session is read from outside the box: inside a pid namespace a session led from outside
    // reads as 0, as this process's own does when the test itself runs in a container.
    // SAFETY: getsid(0) reads this process's session id.
    let ours = unsafe { libc::getsid(0) };
    let marker = format!("7.{}{}", std::process::id(), engine as u8);
    let script = format!(
        "(exec 3</dev/tty && echo tty-opened) 2>/dev/null || echo no-tty; sleep {marker}; echo end"
    );
    let id = start_attempt(&h, &ws, &script, false).await;
    let mut sessions = Vec::new();
    for _ in 0..500 {
        sessions = sessions_of(&["sleep", &marker]);
        if !sessions.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (_, _, out) = finish_attempt(&h, id).await;
    f.check(
        out.contains("no-tty") && !sessions.is_empty() && !sessions.contains(&ours),
        format!(
            "{e}: shares the app's session or terminal ({ours}, the box's {sessions:?}): {out}"
        ),
    );

    // Signals to a process outside the box.
    let mut outside = Command::new("sleep").arg("60").spawn().unwrap();
    let (_, _, out) = attempt(
        &h,
        &ws,
        &format!("kill -STOP {} && echo stopped; echo end", outside.id()),
        false,
    )
    .await;
    let state = std::fs::read_to_string(format!("/proc/{}/stat", outside.id())).unwrap_or_default();
    f.check(
        !out.contains("stopped") && !state.contains(") T "),
        format!("{e}: signalled a process outside its box: {out}"),
    );
    let _ = outside.kill();
    let _ = outside.wait();

    // Secrets by path, the data root, and the user token.
    let (_, _, out) = attempt(
        &h,
        &ws,
        &format!(
            "cat '{home}/.ssh/id_ed25519.secret'; cat '{data}/mcp-token-copy'; cat '{data}/mcp-token'; echo end",
            home = s.home.display(),
            data = rt.data.display()
        ),
        false,
    )
    .await;
    f.check(
        !out.contains("PRIVATE-KEY-BYTES") && !out.contains("USER-TOKEN-VALUE"),
        format!("{e}: read a secret: {out}"),
    );

    // /tmp is its own (bubblewrap; under Landlock only $TMPDIR is writable, and it says so).
    if engine == EngineChoice::Bubblewrap {
        let name = format!("paseo-redteam-{}", std::process::id());
        let (_, status, out) = attempt(
            &h,
            &ws,
            &format!("echo x > /tmp/{name} && cat /tmp/{name} && ls /tmp/.X11-unix 2>&1; echo end"),
            false,
        )
        .await;
        f.check(
            status == Status::Idle
                && out.lines().any(|l| l == "x")
                && !Path::new("/tmp").join(&name).exists(),
            format!("{e}: /tmp is not its own: {out}"),
        );
    }
    rt.rt.shutdown().await;

    // The network off: not even the loopback (Landlock denies TCP; bubblewrap has no network).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let off = SandboxConfig {
        network: false,
        ..sandbox.clone()
    };
    let rt = runtime(&s.root.join(format!("data-offline-{e}")), off).await;
    let h = rt.rt.handle();
    let ws = workspace(&h, &project).await;
    let (_, _, out) = attempt(
        &h,
        &ws,
        &format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\" 2>&1 | tail -1; echo end"
        ),
        false,
    )
    .await;
    f.check(
        !out.contains("connected"),
        format!("{e}: the network was on with network false: {out}"),
    );
    rt.rt.shutdown().await;

    // A data root under ~/.cache: worktree agents start (bubblewrap used to fail to chdir).
    let rt = runtime(&s.home.join(format!(".cache/paseo-{e}")), sandbox.clone()).await;
    let h = rt.rt.handle();
    let mut req = CreateAgent::new(
        "shell",
        WorkspaceTarget::worktree(
            Some(project.display().to_string()),
            WorktreeTarget::branch_off(format!("cache-{e}"), None),
        ),
    );
    req.initial_prompt = Some("pwd; echo ran > ran.txt; git status --short; echo end".into());
    let id = h.create(req).await.unwrap().record.id;
    let r = h.wait(id, T).await.unwrap();
    f.check(
        r.agent.status == Status::Idle,
        format!(
            "{e}: a worktree agent with the data root under ~/.cache: {:?} {:?}",
            r.agent.status, r.agent.record.last_error
        ),
    );
    rt.rt.shutdown().await;
}

/// A contained Claude Code agent's CLI state (its own layer, `providers::claude::state_layer`):
/// from inside its box it tries to change what the user's own `claude` runs (settings kept as
/// a dotfiles symlink, a plugin's hooks, the user-scope MCP servers in `.claude.json`), and
/// writes what it must (a transcript, read its login).
fn cli_state(s: &Session, engine: EngineChoice, f: &mut Findings) {
    use paseo_core::providers::process::AgentEnv;
    use paseo_core::sandbox::{Containment, Engine};
    let e = format!("{engine:?}");
    let base = s.root.join(format!("cli-{e}"));
    let (user, dotfiles, data, cwd) = (
        base.join("user-claude"),
        base.join("dotfiles"),
        base.join("data"),
        base.join("work"),
    );
    for d in [
        &user.join("plugins/p"),
        &user.join("projects"),
        &dotfiles,
        &data,
        &cwd,
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(dotfiles.join("settings.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink(dotfiles.join("settings.json"), user.join("settings.json")).unwrap();
    std::fs::write(user.join("plugins/p/hooks.json"), "{}\n").unwrap();
    std::fs::write(user.join(".credentials.json"), "CRED-VALUE").unwrap();
    let user_json = base.join("user.claude.json");
    std::fs::write(&user_json, "{\"mcpServers\": {}}\n").unwrap();
    let engine = match engine {
        EngineChoice::Landlock => Engine::Landlock(
            Containment::probe(EngineChoice::Landlock).map_or(1, |e| match e {
                Engine::Landlock(abi) => abi,
                _ => 1,
            }),
        ),
        _ => Containment::probe(EngineChoice::Bubblewrap).unwrap(),
    };
    let tmp = data.join("tmp/agent");
    std::fs::create_dir_all(&tmp).unwrap();
    let plan = Containment::with_engine(engine, &SandboxConfig::default(), &data)
        .agent_plan(&cwd, &tmp, false)
        .unwrap()
        .unwrap();
    let agent = AgentId::new();
    let mut env = AgentEnv::new(agent, &Default::default(), &Default::default(), None);
    env.sandbox = Some(std::sync::Arc::new(plan));
    let layer = paseo_core::providers::claude::state_layer(user.clone(), Some(user_json.clone()));
    assert!(env.cli_layer(agent, &layer).unwrap());
    let own = env.set["CLAUDE_CONFIG_DIR"].clone();
    let plan = env.sandbox.clone().unwrap();
    let script = "cd \"$CLAUDE_CONFIG_DIR\"; \
         echo '{\"hooks\": 1}' > settings.json || echo settings-refused; \
         rm -f settings.json 2>/dev/null; echo '{\"hooks\": 2}' > settings.json || echo settings-kept; \
         echo '{\"hooks\": 3}' > plugins/p/hooks.json || echo plugin-refused; \
         echo '{\"mcpServers\": {\"x\": {\"command\": \"evil\"}}}' > .claude.json && echo own-json; \
         echo t > projects/transcript && echo transcript; cat .credentials.json; echo; echo end";
    let boxed = plan.command(Path::new("/bin/sh"), &["-c".into(), script.into()], &cwd);
    let out = boxed
        .std_command()
        .unwrap()
        .current_dir(&cwd)
        .env("CLAUDE_CONFIG_DIR", &own)
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    f.check(
        out.contains("end"),
        format!("{e}: the CLI-state attempt did not run: {out}"),
    );
    f.check(
        std::fs::read_to_string(dotfiles.join("settings.json")).unwrap() == "{}\n"
            && std::fs::read_link(user.join("settings.json")).is_ok(),
        format!("{e}: changed the user's settings through its layer: {out}"),
    );
    f.check(
        std::fs::read_to_string(user.join("plugins/p/hooks.json")).unwrap() == "{}\n",
        format!("{e}: changed a plugin's hooks the user's claude runs: {out}"),
    );
    f.check(
        std::fs::read_to_string(&user_json).unwrap() == "{\"mcpServers\": {}}\n",
        format!("{e}: changed the user's MCP servers: {out}"),
    );
    f.check(
        out.contains("own-json")
            && out.contains("transcript")
            && user.join("projects/transcript").exists()
            && out.contains("CRED-VALUE"),
        format!(
            "{e}: its own state does not work (its .claude.json, a transcript, its login): {out}"
        ),
    );
}

/// A `create_agent` or `create_worktree` call with the agent's own token, from its shell.
fn mcp_call(tool: &str, arguments: &str) -> String {
    format!(
        "curl -sS -N \"$PASEO_MCP_URL\" -H \"Authorization: Bearer $PASEO_MCP_TOKEN\" \
         -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
         --data-binary '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{arguments}}}}}'; echo"
    )
}

/// A held start runs nothing before Allow, not even its CLI's process (an unconfined one
/// would run outside any box); a worktree of a repository outside the agent's reach is refused.
async fn held_and_worktrees(
    s: &Session,
    h: &Server,
    ws: &WorkspaceId,
    project: &Path,
    f: &mut Findings,
) {
    let (parent, _, out) = attempt(
        h,
        ws,
        &mcp_call(
            "create_agent",
            "{\"provider\":\"shell\",\"title\":\"outside\",\"unconfined\":true,\"initialPrompt\":\"echo unboxed-ran\",\"relationship\":{\"kind\":\"subagent\"},\"workspace\":{\"kind\":\"current\"}}",
        ),
        false,
    )
    .await;
    let kid = support::eventually(T, || async {
        let (kids, _) = h
            .list(paseo_core::engine::ListFilter::default(), 1000)
            .await
            .unwrap();
        kids.into_iter()
            .find(|k| k.record.title == "outside" && k.parent_agent_id == Some(parent))
            .ok_or_else(|| format!("no held child; the parent said: {out}"))
    })
    .await;
    let request = kid.pending_permission.clone().map(|p| p.request_id);
    f.check(
        request.is_some(),
        "held start: the unconfined child was not held",
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    // No session at all (a Claude Code or Codex session would be a process running the CLI's
    // start-up hooks, outside any box for an unconfined one).
    let now = h.get(kid.record.id).await.unwrap();
    f.check(
        now.status == Status::Closed && support::agent_pids(kid.record.id).is_empty(),
        format!(
            "held start: its session started before the user answered ({:?})",
            now.status
        ),
    );
    if let Some(request) = request {
        h.answer_permission(kid.record.id, request, true)
            .await
            .unwrap();
        h.wait(kid.record.id, T).await.unwrap();
        let out = printed(h, kid.record.id).await;
        f.check(
            out.contains("unboxed-ran"),
            format!("held start: Allow did not run it: {out}"),
        );
    }

    let dotfiles = s.home.join("dotfiles");
    if !dotfiles.exists() {
        repo(&dotfiles);
    }
    let (_, _, out) = attempt(
        h,
        ws,
        &mcp_call(
            "create_worktree",
            &format!(
                "{{\"repo\":\"{}\",\"target\":{{\"kind\":\"branch-off\",\"newBranch\":\"planted\"}}}}",
                dotfiles.display()
            ),
        ),
        false,
    )
    .await;
    let branches = git(&dotfiles, &["branch", "--list", "planted"]);
    f.check(
        branches.trim().is_empty() && out.contains("outside the calling agent"),
        format!("create_worktree made a branch in a repository outside the agent's reach: {out}"),
    );
    // Its own repository: allowed.
    let (_, _, out) = attempt(
        h,
        ws,
        &mcp_call(
            "create_worktree",
            "{\"target\":{\"kind\":\"branch-off\",\"newBranch\":\"own-wt\"}}",
        ),
        false,
    )
    .await;
    f.check(
        !git(project, &["branch", "--list", "own-wt"])
            .trim()
            .is_empty(),
        format!("create_worktree of its own repository was refused: {out}"),
    );
}
