//! What the window benches share: order statistics, the machine and its load, memory (PSS) and
//! CPU of the app's processes read from /proc, and the in-page frame-interval sampler.

// Each bench uses a different part.
#![allow(dead_code)]

use std::path::Path;

/// p50, p95 and max of a sample, in its unit (milliseconds here).
pub struct Stats {
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
    pub n: usize,
}

/// The statistics of `v` (panics on an empty sample: a bench that measured nothing is wrong).
pub fn stats(mut v: Vec<f64>) -> Stats {
    assert!(!v.is_empty(), "an empty sample");
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    Stats {
        p50: at(0.5),
        p95: at(0.95),
        max: v[v.len() - 1],
        n: v.len(),
    }
}

/// One line of a report: `what`, then p50, p95 and max in ms.
pub fn line(what: &str, s: &Stats) {
    println!(
        "{what:<48} p50 {:>6.1} ms   p95 {:>6.1} ms   max {:>6.1} ms   (n = {})",
        s.p50, s.p95, s.max, s.n
    );
}

pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Cores, CPU model, date and the load average now.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_default();
    let sharing = sharing_pages();
    format!(
        "{cpus} cores ({model}), {}, load average at start {}{}",
        chrono::Utc::now().format("%Y-%m-%d"),
        loadavg(),
        if sharing.is_empty() {
            String::new()
        } else {
            format!(
                "\nWARNING: already running, sharing pages with the measured app and WebKit (their \
                 PSS reads lower, an idle window's by more): {}",
                sharing.join(", ")
            )
        }
    )
}

/// Display servers, WebKit processes and Paseo windows running before the bench starts any:
/// each maps some of the pages the measured processes map and takes a share of their PSS.
fn sharing_pages() -> Vec<String> {
    const NAMES: [&str; 5] = [
        "Xvfb",
        "Xorg",
        "WebKitWebProces",
        "WebKitNetworkPr",
        "paseo-desktop",
    ];
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<String> = procs
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            let comm = comm.trim();
            // A process that has ended and waits to be reaped (state Z) maps nothing.
            let ended = std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|st| st.rsplit_once(") ").map(|(_, rest)| rest.starts_with('Z')))
                .unwrap_or(true);
            (NAMES.contains(&comm) && !ended).then(|| format!("{comm} (pid {pid})"))
        })
        .collect();
    found.sort();
    found
}

/// PSS in KiB of one process (0 once it is gone).
pub fn pss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The app's memory as scripts/idle-memory.sh counts it, but only the app and its WebKit
/// processes (not the agents it runs): PSS in MiB of the app, of WebKit, and their sum.
#[derive(Clone, Copy)]
pub struct Memory {
    pub app: f64,
    pub webkit: f64,
}

impl Memory {
    pub fn total(&self) -> f64 {
        self.app + self.webkit
    }
}

/// The app's WebKit processes (web, network, GPU), found under it in the process tree.
pub fn webkit_pids(app_pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = children(app_pid);
    while let Some(pid) = stack.pop() {
        if comm(pid).starts_with("WebKit") {
            out.push(pid);
            stack.extend(children(pid));
        }
    }
    out
}

pub fn memory(app_pid: u32) -> Memory {
    let webkit: u64 = webkit_pids(app_pid).into_iter().map(pss_kib).sum();
    Memory {
        app: pss_kib(app_pid) as f64 / 1024.0,
        webkit: webkit as f64 / 1024.0,
    }
}

/// CPU time (user + system, all threads, not its children) the process has used, in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // The command name may hold spaces: the fields start after its closing parenthesis.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    ticks as f64 / clock_ticks()
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// How long ago (seconds) the process started, from its start time in /proc (clock ticks since
/// boot) and the uptime now: resolution one clock tick (10 ms).
pub fn age_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let start: f64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(uptime - start / clock_ticks())
}

/// The size of a directory tree in bytes (what the data root holds on disk).
pub fn disk_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => disk_bytes(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

/// In the page: frame intervals (ms between requestAnimationFrame callbacks) over `ms`
/// milliseconds, and how many timeline items the DOM holds at the end.
pub const FRAMES: &str = r#"
const [ms, done] = arguments;
const gaps = [];
let last = performance.now();
const end = last + ms;
function tick(now) {
  gaps.push(now - last);
  last = now;
  if (now < end) requestAnimationFrame(tick);
  else done({ gaps, nodes: document.querySelectorAll('[data-testid="timeline-item"]').length });
}
requestAnimationFrame(tick);
"#;
