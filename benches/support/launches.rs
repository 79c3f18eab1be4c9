//! A data root's launches for the scroll bench: when each step of the start happened (the
//! page's marks, the app's log), the medians, and the memory once settled.

use crate::common::Harness;
use crate::page::{mark_ms, marked_ms, started_ms};
use crate::support::{self, stats};
use crate::{LAUNCHES, LONG};
use std::time::{Duration, Instant};

/// Medians of a data root's launches: to its first screen (`paseo-ready`, the DOM built) and to
/// the frame that draws it (`paseo-painted`, laid out and painted), to every card in the page,
/// and the PSS of the app and its WebKit processes, settled.
pub struct Launched {
    pub ready: f64,
    pub painted: f64,
    pub whole: f64,
    pub memory: f64,
}

/// Launches the app on `h`'s data root `LAUNCHES` times and takes the medians ([`Launched`]).
/// Prints where the launch's time went (the median of each step, ms from the process's start).
pub async fn launches(h: &Harness) -> Launched {
    let mut times = Vec::new();
    let mut wholes = Vec::new();
    let mut steps: Vec<Vec<f64>> = vec![Vec::new(); STEPS.len()];
    let mut memories = Vec::new();
    // PASEO_BENCH_EACH=1: each launch's steps too, not only their medians.
    let each = std::env::var_os("PASEO_BENCH_EACH").is_some();
    // PASEO_BENCH_CACHE=off: each launch without the records cache (removed before it), for
    // the figure with and without it from one build, runs alternating.
    let no_cache = std::env::var("PASEO_BENCH_CACHE").is_ok_and(|v| v == "off");
    for _ in 0..LAUNCHES {
        if no_cache {
            let _ = std::fs::remove_file(h.home().join("cache").join("records.bin"));
        }
        let app = h.launch_ready(&[]).await;
        let start = started_ms(&app);
        times.push(mark_ms(&app, "paseo-ready", LONG).await - start);
        wholes.push(mark_ms(&app, "paseo-whole", LONG).await - start);
        let mut this = Vec::new();
        for (k, (what, step)) in STEPS.iter().enumerate() {
            let at = match step {
                Step::Page(mark) => marked_ms(&app, mark).await,
                Step::Log(message) => last_logged(h.home(), message).map(|(ms, _)| ms),
            };
            let at = at.map_or(f64::NAN, |t| t - start);
            this.push(format!("{what} {at:.0}"));
            steps[k].push(at);
        }
        if each {
            // How many records it parsed from the records cache (the log's `cached=`).
            let cached = last_logged(h.home(), "records read")
                .and_then(|(_, l)| {
                    l.split_whitespace()
                        .find(|w| w.starts_with("cached="))
                        .map(String::from)
                })
                .unwrap_or_else(|| "cached=?".into());
            println!("  (one launch: {}; {cached})", this.join(", "));
        }
        // Every launch's, settled: one launch's PSS moves by ±5 MiB (which library pages the
        // app and its WebKit processes share at the time), the median of three far less.
        tokio::time::sleep(Duration::from_secs(5)).await;
        let m = support::memory(app.pid());
        memories.push((m.total(), m.app, m.webkit));
        app.quit().await;
    }
    memories.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (memory, split) = memories
        .get(memories.len() / 2)
        .map_or((0.0, (0.0, 0.0)), |&(total, app, webkit)| {
            (total, (app, webkit))
        });
    let medians: Vec<f64> = steps.into_iter().map(|at| stats(at).p50).collect();
    let said: Vec<String> = STEPS
        .iter()
        .zip(&medians)
        .map(|((what, _), at)| format!("{what} {at:.0}"))
        .collect();
    let painted = STEPS
        .iter()
        .position(|(what, _)| *what == "painted")
        .map_or(f64::NAN, |i| medians[i]);
    println!("  (ms from the process's start: {})", said.join(", "));
    println!(
        "  (PSS of the app {:.0} MiB, its WebKit processes {:.0} MiB)",
        split.0, split.1
    );
    Launched {
        ready: stats(times).p50,
        painted,
        whole: stats(wholes).p50,
        memory,
    }
}

/// The first launch on a new data root: its launch → ready, and whether it wrote the records
/// cache the launches after it read (waited for: it is written a few seconds after the start,
/// and would otherwise run during the first measured launch).
pub async fn first_launch(h: &Harness) -> (f64, bool) {
    let app = h.launch_ready(&[]).await;
    let start = started_ms(&app);
    let ready = mark_ms(&app, "paseo-ready", LONG).await - start;
    let cache = h.home().join("cache").join("records.bin");
    let waited = Instant::now();
    while !cache.exists() && waited.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    app.quit().await;
    (ready, cache.exists())
}

/// Where a launch's time goes: a mark of the page (`ui/boot.js`) or a line of the app's log.
enum Step {
    Page(&'static str),
    Log(&'static str),
}

/// The steps of a launch the bench reports, by name, in the order they usually come.
const STEPS: [(&str, Step); 13] = [
    ("window open", Step::Log("main window open")),
    ("page start", Step::Page("navigation")),
    ("boot", Step::Page("paseo-boot")),
    ("first screen asked", Step::Page("paseo-asked")),
    ("records read", Step::Log("records read")),
    ("records loaded", Step::Log("data root loaded")),
    ("backend started", Step::Log("backend started")),
    ("answered", Step::Page("paseo-answered")),
    ("kept", Step::Page("paseo-kept")),
    ("info", Step::Page("paseo-info")),
    ("render", Step::Page("paseo-render")),
    ("ready", Step::Page("paseo-ready")),
    ("painted", Step::Page("paseo-painted")),
];

/// The app's last log line in the data root `home` that says `message`: when (epoch
/// milliseconds) and the line.
fn last_logged(home: &std::path::Path, message: &str) -> Option<(f64, String)> {
    let logs = std::fs::read_dir(home.join("logs")).ok()?;
    let mut last: Option<(f64, String)> = None;
    for file in logs.flatten() {
        let text = std::fs::read_to_string(file.path()).unwrap_or_default();
        for l in text.lines().filter(|l| l.contains(message)) {
            let Some(at) = l
                .split_whitespace()
                .next()
                .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
            else {
                continue;
            };
            let ms = at.timestamp_micros() as f64 / 1000.0;
            if last.as_ref().is_none_or(|(t, _)| ms >= *t) {
                last = Some((ms, l.to_string()));
            }
        }
    }
    last
}
