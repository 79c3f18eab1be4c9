//! Many live agents (SPEC 12; the scale targets in docs/scale.md): `AGENTS` shell agents each
//! printing about `RATE` lines a second for the given minutes (real processes: a perl loop per
//! agent), the window open with tabs on several of them and the last one opened on screen,
//! following its tail.
//!
//! Every 10 s it samples the PSS of the app and its WebKit processes (not the agents), the CPU
//! time of the app process (utime + stime of all its threads, /proc) and of WebKit, the lines
//! the page received and the size of its DOM. It prints the idle PSS (same run, window open,
//! before any agent exists), the PSS after the first minute and at the end as ratios to idle,
//! the slope after the first minute (least squares), and the average CPU in cores while
//! streaming. Targets (docs/scale.md): PSS ≤ 2× idle and flat after the first minute; the backend
//! under one core.
//!
//! `cargo bench --bench stream_soak [-- --minutes N --agents N --rate LINES_PER_S]` (default
//! 10 minutes, 20 agents, 100 lines/s; release build, Xvfb, tauri-driver). Not part of
//! scripts/test.sh.

// The e2e harness, shared with the tests.
#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use common::App;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const AGENTS: usize = 20;
const RATE: u32 = 100;
const MINUTES: f64 = 10.0;
/// Agents with a tab in the window; the last one opened is on screen.
const TABS: usize = 6;
const SAMPLE: Duration = Duration::from_secs(10);

/// In the page: counts the timeline items and output lines this window receives from now on.
const COUNT: &str = r#"
const done = arguments[0];
window.__soak = { items: 0, lines: 0 };
import('/backend.js').then((b) => b.listen('paseo://event', (ev) => {
  if (ev.type !== 'timelineItems') return;
  window.__soak.items += ev.items.length;
  for (const it of ev.items) if (it.kind === 'output') window.__soak.lines += (it.text.match(/\n/g) || []).length;
})).then(() => done(true));
"#;

/// In the page: what it received so far and how big its DOM is.
const PAGE: &str = "return { lines: window.__soak.lines, items: window.__soak.items,
    elements: document.getElementsByTagName('*').length,
    timeline: document.querySelectorAll('[data-testid=\"timeline-item\"]').length };";

struct Options {
    minutes: f64,
    agents: usize,
    rate: u32,
}

fn main() {
    // `cargo test --benches` runs this without --bench: do nothing then.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("stream_soak: run with `cargo bench --bench stream_soak`");
        return;
    }
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .map(|i| args.get(i + 1).and_then(|v| v.parse::<f64>().ok()))
            .map(|v| v.unwrap_or_else(|| panic!("{name} takes a number")))
    };
    let options = Options {
        minutes: value("--minutes").unwrap_or(MINUTES),
        agents: value("--agents").map_or(AGENTS, |v| v as usize),
        rate: value("--rate").map_or(RATE, |v| v as u32),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(run(options));
}

/// A shell prompt that prints `rate` numbered lines a second (on a fixed schedule, so a slow
/// write does not lower the rate) for `secs` seconds.
fn stream(agent: usize, rate: u32, secs: u64) -> String {
    format!(
        "perl -MTime::HiRes=time,sleep -e '$|=1; my $t0 = time; \
         for (my $i = 1; $i / {rate} < {secs}; $i++) {{ my $d = $t0 + $i / {rate} - time; \
         sleep $d if $d > 0; print \"agent {agent} line $i: the quick brown fox jumps over the lazy dog\\n\" }}'"
    )
}

struct Sample {
    at: f64,
    pss: f64,
}

async fn run(o: Options) {
    println!("stream soak, {}", support::machine());
    println!(
        "{} agents × {} lines/s for {} min; {TABS} tabs open, one on screen\n",
        o.agents, o.rate, o.minutes
    );
    let h = common::Harness::new("stream_soak");
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("soak");
    let pid = app.pid();
    tokio::time::sleep(SAMPLE).await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(support::memory(pid).total());
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let idle = support::stats(idle).p50;
    println!("idle (window open, no agents): PSS app + WebKit {idle:.0} MiB\n");

    app.execute_async(COUNT, vec![]).await;
    // The agents stream a little longer than the soak, so that all of it is under full load.
    let secs = (o.minutes * 60.0) as u64 + 60;
    let mut ids = Vec::new();
    for i in 0..o.agents {
        let agent = app
            .create_shell(&dir, &format!("stream-{i:02}"), &stream(i, o.rate, secs))
            .await;
        ids.push(agent["id"].as_str().expect("an agent id").to_string());
    }
    for id in ids.iter().take(TABS) {
        app.call_ui("/gestures/tabs.js", "openAgent", vec![json!(id)])
            .await;
    }
    let on_screen = &ids[TABS.min(ids.len()) - 1];
    app.wait_for(&format!(
        "[data-testid=\"agent-pane\"][data-agent-id=\"{on_screen}\"] [data-testid=\"timeline-item\"]"
    ))
    .await;

    println!(
        "{:>6} {:>10} {:>8} {:>8} {:>9} {:>9} {:>10} {:>9} {:>9}",
        "t (s)", "PSS MiB", "app", "WebKit", "app CPU", "WebKit", "lines/s", "DOM els", "timeline"
    );
    let started = Instant::now();
    let webkit = support::webkit_pids(pid);
    let cpu = |pids: &[u32]| pids.iter().map(|&p| support::cpu_seconds(p)).sum::<f64>();
    let (app_cpu0, webkit_cpu0) = (support::cpu_seconds(pid), cpu(&webkit));
    let mut last = (0.0, app_cpu0, webkit_cpu0, 0.0);
    let mut samples = Vec::new();
    let end = Duration::from_secs_f64(o.minutes * 60.0);
    while started.elapsed() < end {
        tokio::time::sleep(SAMPLE.min(end - started.elapsed())).await;
        let at = started.elapsed().as_secs_f64();
        let memory = support::memory(pid);
        let (app_cpu, webkit_cpu) = (support::cpu_seconds(pid), cpu(&webkit));
        let page = app.execute(PAGE, vec![]).await;
        let lines = page["lines"].as_f64().unwrap_or(0.0);
        let dt = at - last.0;
        println!(
            "{at:>6.0} {:>10.0} {:>8.0} {:>8.0} {:>9.2} {:>9.2} {:>10.0} {:>9} {:>9}",
            memory.total(),
            memory.app,
            memory.webkit,
            (app_cpu - last.1) / dt,
            (webkit_cpu - last.2) / dt,
            (lines - last.3) / dt,
            page["elements"].as_u64().unwrap_or(0),
            page["timeline"].as_u64().unwrap_or(0),
        );
        last = (at, app_cpu, webkit_cpu, lines);
        samples.push(Sample {
            at,
            pss: memory.total(),
        });
    }
    let elapsed = last.0;
    let app_cores = (last.1 - app_cpu0) / elapsed;
    let webkit_cores = (last.2 - webkit_cpu0) / elapsed;
    let streaming = running(&app, &ids).await;
    let lines_rate = last.3 / elapsed;

    let first = samples.iter().find(|s| s.at >= 60.0).or(samples.last());
    let end_pss = samples.last().map_or(f64::NAN, |s| s.pss);
    println!("\nsummary ({elapsed:.0} s under load; {streaming} of {} agents still streaming at the end):", o.agents);
    println!(
        "  lines received by the page: {lines_rate:.0}/s ({:.0}/s per agent; asked {})",
        lines_rate / o.agents as f64,
        o.rate
    );
    println!("  PSS idle: {idle:.0} MiB");
    if let Some(first) = first {
        println!(
            "  PSS at {:.0} s: {:.0} MiB = {:.2}× idle",
            first.at,
            first.pss,
            first.pss / idle
        );
    }
    println!(
        "  PSS at the end: {end_pss:.0} MiB = {:.2}× idle (target ≤ 2×)",
        end_pss / idle
    );
    let after: Vec<&Sample> = samples.iter().filter(|s| s.at >= 60.0).collect();
    if let Some(slope) = slope(&after) {
        println!(
            "  slope after the first minute: {slope:+.2} MiB/min ({:+.2}% of idle per minute)",
            100.0 * slope / idle
        );
    }
    println!("  CPU, average while streaming: app {app_cores:.2} cores (target < 1), WebKit {webkit_cores:.2} cores");
    println!(
        "  on disk after the run: timelines {:.1} MiB, logs {:.2} MiB",
        mib(support::disk_bytes(&h.home().join("timelines"))),
        mib(support::disk_bytes(&h.home().join("logs")))
    );
    println!("  load average after the run: {}", support::loadavg());

    for id in &ids {
        app.call_ui("/backend.js", "cancelAgent", vec![json!(id)])
            .await;
    }
    app.quit().await;
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// How many of `ids` the backend reports running.
async fn running(app: &App, ids: &[String]) -> usize {
    let snap = app.fleet_snapshot().await;
    let agents = snap["agents"].as_array().cloned().unwrap_or_default();
    ids.iter()
        .filter(|id| {
            agents
                .iter()
                .any(|a: &Value| a["id"] == id.as_str() && a["status"] == "running")
        })
        .count()
}

/// The least-squares slope of PSS over time, in MiB per minute.
fn slope(samples: &[&Sample]) -> Option<f64> {
    if samples.len() < 2 {
        return None;
    }
    let n = samples.len() as f64;
    let mt = samples.iter().map(|s| s.at / 60.0).sum::<f64>() / n;
    let mp = samples.iter().map(|s| s.pss).sum::<f64>() / n;
    let cov: f64 = samples
        .iter()
        .map(|s| (s.at / 60.0 - mt) * (s.pss - mp))
        .sum();
    let var: f64 = samples.iter().map(|s| (s.at / 60.0 - mt).powi(2)).sum();
    (var > 0.0).then(|| cov / var)
}
