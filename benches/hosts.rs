//! Hosts in the real window (SPEC 17): a host's agents as near as this machine's.
//!
//! Real parts only: the release app under WebDriver on Xvfb (as the e2e tests run it), the
//! system `ssh` reaching a real `sshd` on loopback as throwaway users (tests/hosts_support, one
//! sshd and one user per host), this build's `paseo-headless` installed on each host the way
//! "Install on host" does. Each figure is a ratio to a baseline measured in the same run:
//! - first output: a shell agent's prompt sent from the page → the first frame showing its
//!   output in the agent's pane, on a host against on this machine (alternating, both fleets
//!   empty); target: host ≤ local + 30 ms (medians);
//! - reconnect: the app's ssh process killed (the connection is back at once: sshd runs) →
//!   the host's row says connected again, its snapshot applied; target ≤ 2 s;
//! - listing: 10,000 agents (in trees over 20 workspaces) on a host, launch → the page holds
//!   them all with the host's rows drawn (`paseo-host-listed:<host>`), against the same fleet
//!   on this machine (launch → every card in, `paseo-whole`), medians of 3 after a warm-up;
//!   target ≤ 2×;
//! - memory: PSS of the app and its WebKit processes attached to 3 hosts × 10,000 agents,
//!   settled, against an idle window (empty root, no hosts); target ≤ 1.5×. The ssh
//!   processes' PSS is printed beside it.
//!
//! `cargo bench --bench hosts [-- --agents N]` (release build, Xvfb, tauri-driver, root for
//! the throwaway users and sshd).

// The e2e harness and the hosts tests' sshd, shared with the tests.
#[path = "../tests/common/mod.rs"]
mod common;
#[allow(dead_code)] // the tests' helpers this bench does not need
#[path = "../tests/hosts_support/mod.rs"]
mod hosts_support;
#[path = "support/page.rs"]
mod page;
#[path = "../crates/paseo-core/benches/support/seed.rs"]
mod seed;
mod support;

use common::{tid, App, Harness};
use hosts_support::{alive, ssh_children, stop_pid, Sshd, HEADLESS};
use page::{mark_ms, now_ms, started_ms};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::{line, stats};

const AGENTS: usize = 10_000;
const HOSTS: usize = 3;
const OUTPUT_SAMPLES: usize = 15;
const RECONNECTS: usize = 5;
const LAUNCHES: usize = 3;
const OUTPUT_SLACK_MS: f64 = 30.0;
const RECONNECT_MS: f64 = 2_000.0;
const LISTING_TARGET: f64 = 2.0;
const MEMORY_TARGET: f64 = 1.5;
const LONG: Duration = Duration::from_secs(120);

fn main() {
    // `cargo test --benches` runs this without --bench: do nothing then.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("hosts: run with `cargo bench --bench hosts`");
        return;
    }
    let mut agents = AGENTS;
    let mut only: Option<String> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--only" {
            only = it.next().cloned();
        } else if arg == "--agents" {
            agents = it.next().and_then(|s| s.parse().ok()).expect("--agents N");
        }
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("hosts: needs root (throwaway users and sshd for them); skipped");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // Set up before the runtime: the install runs its own.
    let hosts = Hosts::start(HOSTS);
    rt.block_on(run(hosts, agents, only.as_deref()));
}

fn pass(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

/// The hosts `box1`…`boxN`: one sshd and one user each, one ssh config naming them all.
struct Hosts {
    sshds: Vec<Sshd>,
    config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Hosts {
    fn start(n: usize) -> Hosts {
        let dir = tempfile::tempdir().expect("a temp dir");
        let mut sshds = Vec::new();
        let mut config = String::new();
        for i in 1..=n {
            let sshd = Sshd::start(&format!("bench{i}")).expect("sshd as root");
            let theirs = std::fs::read_to_string(sshd.dir.path().join("ssh_config"))
                .expect("the sshd's ssh config");
            // Their block for the alias `box`, renamed: each sshd's config names its own box.
            let block: Vec<&str> = theirs
                .split("Host ")
                .filter(|b| b.starts_with("box\n"))
                .collect();
            config.push_str(&format!("Host box{i}{}", &block[0]["box".len()..]));
            sshds.push(sshd);
        }
        let path = dir.path().join("ssh_config");
        std::fs::write(&path, config).expect("the ssh config");
        let hosts = Hosts {
            sshds,
            config: path,
            _dir: dir,
        };
        for i in 1..=n {
            hosts.install(i);
        }
        hosts
    }

    fn name(i: usize) -> String {
        format!("box{i}")
    }

    fn sshd(&self, i: usize) -> &Sshd {
        &self.sshds[i - 1]
    }

    fn options(&self) -> paseo_core::hosts::SshOptions {
        paseo_core::hosts::SshOptions {
            program: PathBuf::from("ssh"),
            extra: vec!["-F".into(), self.config.display().to_string()],
        }
    }

    /// This build's paseo-headless on host `i`, as "Install on host" puts it there.
    fn install(&self, i: usize) {
        let host = paseo_core::hosts::Host {
            name: Hosts::name(i),
            ssh: Hosts::name(i),
            command: None,
        };
        let rt = tokio::runtime::Runtime::new().expect("a runtime");
        rt.block_on(paseo_core::hosts::install(
            &host,
            &self.options(),
            Path::new(HEADLESS),
        ))
        .unwrap_or_else(|e| panic!("install on {}: {e}\n{}", host.name, self.sshd(i).log()));
    }

    /// Stops host `i`'s backend (started detached by attach) and waits until it is gone.
    fn stop_backend(&self, i: usize) {
        if let Some(pid) = self.sshd(i).host_backend() {
            if alive(pid) {
                stop_pid(pid);
            }
        }
    }

    /// `n` agent records in host `i`'s data root, owned by its user as its own backend made.
    fn seed(&self, i: usize, n: usize) {
        self.stop_backend(i);
        let user = &self.sshd(i).user;
        let root = user.home.join(".paseo");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("the host's data root");
        seed::seed_tagged(&root, n, 0, &format!("box{i}"));
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))
            .expect("chmod the data root");
        let owned = std::process::Command::new("chown")
            .args(["-R", &format!("{0}:{0}", user.name)])
            .arg(&root)
            .status()
            .expect("chown");
        assert!(owned.success(), "chown {}", root.display());
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for i in 1..=self.sshds.len() {
            self.stop_backend(i);
        }
    }
}

/// A harness whose config.json names `hosts` (box1…) reached through `config`.
fn harness(name: &str, hosts: &[usize], config: &Path) -> Harness {
    let h = Harness::builder(name)
        .env("PASEO_SSH_CONFIG", &config.display().to_string())
        .build();
    let list: Vec<Value> = hosts
        .iter()
        .map(|i| json!({"name": Hosts::name(*i), "ssh": Hosts::name(*i)}))
        .collect();
    std::fs::write(
        h.home().join("config.json"),
        json!({"hosts": list}).to_string(),
    )
    .expect("config.json");
    h
}

/// Milliseconds from the app process's start to the page's performance mark `mark`, waiting
/// (bounded) until the page has made it.
async fn launch_ms(app: &App, mark: &str) -> f64 {
    mark_ms(app, mark, LONG).await - started_ms(app)
}

fn host_row(name: &str) -> String {
    format!("[data-testid=\"host-row\"][data-host=\"{name}\"]")
}

async fn connected(app: &App, name: &str) {
    app.wait_for_attr(&host_row(name), "data-state", "connected")
        .await;
}

/// In the page: sends `prompt` to agent `id` (its pane on screen) and resolves to the
/// milliseconds until the first frame after its pane shows `marker` (the output: the prompt's
/// own text does not contain it).
const FIRST_OUTPUT: &str = r#"
const [id, prompt, marker, done] = arguments;
const frame = () => new Promise((r) => requestAnimationFrame(r));
import('/backend.js').then(async (b) => {
  const pane = () => document.querySelector(`[data-testid="agent-pane"][data-agent-id="${id}"]`);
  const shown = () => (pane()?.textContent ?? '').includes(marker);
  const t0 = performance.now();
  let failed = null;
  b.sendPrompt(id, prompt).catch((e) => { failed = String(e && e.message || e); });
  while (!shown() && !failed && performance.now() - t0 < 30000) await frame();
  await frame();
  done(failed ? { error: failed } : shown() ? { ms: performance.now() - t0 } : { error: 'not shown' });
});
"#;

/// In the page: how many cards it holds per host, and the roots the selected workspace lists.
const HELD: &str = r#"
const done = arguments[0];
Promise.all([import('/store.js'), import('/layout.js')]).then(([{ fleet, rootsIn }, layout]) => {
  const out = {};
  for (const card of fleet.agents.values()) out[card.host ?? 'here'] = (out[card.host ?? 'here'] ?? 0) + 1;
  const ws = layout.layout.selected;
  out.selected = { ws, host: fleet.workspaces.get(ws)?.host ?? null, roots: ws ? rootsIn(ws).length : null };
  done(out);
});
"#;

/// In the page: the agent's status as the window holds it.
const STATUS: &str = r#"
const [id, done] = arguments;
import('/store.js').then(({ fleet }) => done(fleet.agents.get(id)?.status ?? null));
"#;

async fn wait_idle(app: &App, id: &str) {
    let deadline = Instant::now() + LONG;
    loop {
        if app.execute_async(STATUS, vec![json!(id)]).await == json!("idle") {
            return;
        }
        assert!(Instant::now() < deadline, "agent {id} never idle");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

async fn open(app: &App, id: &str) {
    app.call_ui("/gestures/tabs.js", "openAgent", vec![json!(id)])
        .await;
    app.wait_for(&format!(
        "[data-testid=\"agent-pane\"][data-agent-id=\"{id}\"]"
    ))
    .await;
}

async fn first_output(app: &App, id: &str, k: usize) -> f64 {
    open(app, id).await;
    wait_idle(app, id).await;
    // The output `o<k>k` is not in the prompt's text (`$((k))` is expanded by the shell).
    let prompt = format!("echo o$(({k}))k");
    let marker = format!("o{k}k");
    let r = app
        .execute_async(FIRST_OUTPUT, vec![json!(id), json!(prompt), json!(marker)])
        .await;
    let ms = r["ms"]
        .as_f64()
        .unwrap_or_else(|| panic!("agent {id}: {r}"));
    wait_idle(app, id).await;
    ms
}

/// In the page: from now on, the times (epoch ms) the host's row changed state.
const WATCH_ROW: &str = r#"
const [selector] = arguments;
window.__row = [];
let last = null;
const look = () => {
  const state = document.querySelector(selector)?.dataset.state ?? null;
  if (state !== last) { window.__row.push({ state, at: Date.now() }); last = state; }
  requestAnimationFrame(look);
};
look();
return true;
"#;

async fn reconnect_ms(app: &App, name: &str) -> (f64, f64) {
    connected(app, name).await;
    app.execute(WATCH_ROW, vec![json!(host_row(name))]).await;
    let ssh = ssh_children(app.pid());
    assert_eq!(ssh.len(), 1, "one ssh for {name}: {ssh:?}");
    let killed = now_ms();
    // SAFETY: a signal to the app's own ssh child, found just above.
    unsafe { libc::kill(ssh[0] as libc::pid_t, libc::SIGKILL) };
    let deadline = Instant::now() + LONG;
    loop {
        let seen = app.execute("return window.__row;", vec![]).await;
        let changes = seen.as_array().cloned().unwrap_or_default();
        let down = changes
            .iter()
            .find(|c| c["state"] != "connected")
            .and_then(|c| c["at"].as_f64());
        if let Some(down) = down {
            if let Some(up) = changes
                .iter()
                .filter(|c| c["at"].as_f64() >= Some(down))
                .find(|c| c["state"] == "connected")
                .and_then(|c| c["at"].as_f64())
            {
                return (down - killed, up - killed);
            }
        }
        assert!(Instant::now() < deadline, "{name} never reconnected");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn run(hosts: Hosts, agents: usize, only: Option<&str>) {
    println!("hosts benchmark, {}", support::machine());
    let part = |name: &str| only.is_none_or(|o| o == name);
    let mut targets = Vec::new();
    if part("output") {
        targets.extend(output_and_reconnect(&hosts).await);
    }
    if part("listing") {
        targets.push(listing(&hosts, agents).await);
    }
    if part("memory") {
        targets.push(memory(&hosts, agents).await);
    }
    println!("\nload average after the run: {}", support::loadavg());
    for l in targets {
        println!("{l}");
    }
}

/// A host agent's first output against this machine's, and reconnects (box1's fleet empty).
async fn output_and_reconnect(hosts: &Hosts) -> [String; 2] {
    let host_home = hosts.sshd(1).user.home.clone();

    // First output and reconnect: box1 and this machine, both fleets empty.
    hosts.seed(1, 0);
    let local_dir = tempfile::tempdir().expect("a local work dir");
    let h = harness("hosts_output", &[1], &hosts.config);
    let app = h.launch_ready(&[]).await;
    connected(&app, "box1").await;
    let ws = app
        .call_backend(
            "addWorkspace",
            vec![json!(local_dir.path().display().to_string())],
        )
        .await;
    let local = app
        .create_agent(json!({"provider": "shell", "title": "here",
            "workspaceId": ws["workspaceId"], "autoArchive": false}))
        .await;
    let remote = app
        .create_agent(
            json!({"provider": "shell", "title": "there", "host": "box1",
            "directory": host_home.display().to_string(), "autoArchive": false}),
        )
        .await;
    let (local, remote) = (
        local["id"].as_str().expect("an id").to_string(),
        remote["id"].as_str().expect("an id").to_string(),
    );
    let (mut here, mut there) = (Vec::new(), Vec::new());
    for k in 0..OUTPUT_SAMPLES + 2 {
        let a = first_output(&app, &local, 2 * k).await;
        let b = first_output(&app, &remote, 2 * k + 1).await;
        // The first two of each warm the paths (a first turn spawns more).
        if k >= 2 {
            here.push(a);
            there.push(b);
        }
    }
    let (here, there) = (stats(here), stats(there));
    line("\nfirst output, an agent on this machine", &here);
    line("first output, an agent on box1 (loopback ssh)", &there);
    let output_line = format!(
        "target: a host agent's first output ≤ local + {OUTPUT_SLACK_MS:.0} ms: +{:.1} ms ({:.1} / {:.1} ms, medians) {}",
        there.p50 - here.p50,
        there.p50,
        here.p50,
        pass(there.p50 <= here.p50 + OUTPUT_SLACK_MS)
    );
    app.screenshot("host-agent").await;

    let mut downs = Vec::new();
    let mut ups = Vec::new();
    for _ in 0..RECONNECTS {
        let (down, up) = reconnect_ms(&app, "box1").await;
        downs.push(down);
        ups.push(up);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (downs, ups) = (stats(downs), stats(ups));
    line("\nssh killed → the row says so", &downs);
    line("ssh killed → connected again, resynced", &ups);
    let reconnect_line = format!(
        "target: reconnect ≤ {RECONNECT_MS:.0} ms after the connection returns: {:.0} ms (max of {RECONNECTS}) {}",
        ups.max,
        pass(ups.max <= RECONNECT_MS)
    );
    app.quit().await;
    drop(h);
    [output_line, reconnect_line]
}

/// Launch → `agents` listed, on box1 against the same fleet here.
async fn listing(hosts: &Hosts, agents: usize) -> String {
    println!("\n{agents} agents in trees over 20 workspaces");
    let h = harness("hosts_local", &[], &hosts.config);
    seed::seed_tagged(h.home(), agents, 0, "local");
    let mut times = Vec::new();
    for _ in 0..LAUNCHES {
        let app = h.launch_ready(&[]).await;
        times.push(launch_ms(&app, "paseo-whole").await);
        app.quit().await;
    }
    drop(h);
    let local_listed = stats(times);
    line(
        "launch → every card in the page, this machine",
        &local_listed,
    );

    hosts.seed(1, agents);
    let h = harness("hosts_listing", &[1], &hosts.config);
    let mut times = Vec::new();
    // One launch to start the host's backend (it then runs detached, as a host's does).
    for i in 0..=LAUNCHES {
        let app = h.launch_ready(&[]).await;
        let ms = launch_ms(&app, "paseo-host-listed:box1").await;
        if i > 0 {
            times.push(ms);
        } else {
            app.screenshot("host-listed").await;
        }
        app.quit().await;
    }
    drop(h);
    let host_listed = stats(times);
    line("launch → every card of box1 in the page", &host_listed);
    let ratio = host_listed.p50 / local_listed.p50;
    format!(
        "target: {agents} agents on a host listed ≤ {LISTING_TARGET}× the same fleet here: {ratio:.2}× ({:.0} / {:.0} ms) {}",
        host_listed.p50,
        local_listed.p50,
        pass(ratio <= LISTING_TARGET)
    )
}

/// An idle window's memory, then one attached to HOSTS hosts × `agents`.
async fn memory(hosts: &Hosts, agents: usize) -> String {
    // Medians of alternating launches: one idle window's PSS moves by tens of MiB between
    // launches (WebKit's share of what it maps), so neither side is one launch.
    for i in 1..=HOSTS {
        hosts.seed(i, agents);
    }
    let all: Vec<usize> = (1..=HOSTS).collect();
    let idle_h = harness("hosts_idle", &[], &hosts.config);
    let h = harness("hosts_memory", &all, &hosts.config);
    let (mut idles, mut attacheds, mut ssh) = (Vec::new(), Vec::new(), 0.0);
    for k in 0..LAUNCHES {
        let app = idle_h.launch_ready(&[]).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        idles.push(support::memory(app.pid()));
        app.quit().await;

        let app = h.launch_ready(&[]).await;
        for i in &all {
            launch_ms(&app, &format!("paseo-host-listed:{}", Hosts::name(*i))).await;
        }
        // Every host's every card is in the page (else the figure would flatter).
        let held = app.execute_async(HELD, vec![]).await;
        for i in &all {
            assert_eq!(
                held[Hosts::name(*i)].as_u64(),
                Some(agents as u64),
                "the cards of {} in the page: {held}",
                Hosts::name(*i)
            );
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
        attacheds.push(support::memory(app.pid()));
        ssh = ssh_children(app.pid())
            .into_iter()
            .map(|p| support::pss_kib(p) as f64 / 1024.0)
            .sum();
        if k == 0 {
            app.click(&tid("tab-home")).await;
            app.screenshot("three-hosts").await;
        }
        app.quit().await;
    }
    drop((idle_h, h));
    let median = |v: &mut Vec<support::Memory>| {
        v.sort_by(|a, b| a.total().total_cmp(&b.total()));
        v[v.len() / 2]
    };
    let all_idle: Vec<String> = idles.iter().map(|m| format!("{:.0}", m.total())).collect();
    let all_attached: Vec<String> = attacheds
        .iter()
        .map(|m| format!("{:.0}", m.total()))
        .collect();
    let (idle, attached) = (median(&mut idles), median(&mut attacheds));
    println!(
        "\nPSS app + WebKit, idle window: {:.0} MiB (app {:.0}, WebKit {:.0}); launches {}",
        idle.total(),
        idle.app,
        idle.webkit,
        all_idle.join(", ")
    );
    println!(
        "PSS app + WebKit, {HOSTS} hosts × {agents} agents: {:.0} MiB (app {:.0}, WebKit {:.0}); launches {}; its ssh processes {ssh:.1} MiB",
        attached.total(),
        attached.app,
        attached.webkit,
        all_attached.join(", ")
    );
    let m = attached.total() / idle.total();
    format!(
        "target: a window attached to {HOSTS} hosts × {agents} agents ≤ {MEMORY_TARGET}× idle: {m:.2}× ({:.0} / {:.0} MiB, medians of {LAUNCHES}) {}",
        attached.total(),
        idle.total(),
        pass(m <= MEMORY_TARGET)
    )
}
