//! Scale (SPEC 12, docs/scale.md): whole-process launch with big data roots. The release
//! `paseo-headless` (the headline: the headless mode without the window stack) and, for comparison,
//! the release `paseo-desktop --headless` are started on a seeded data root and timed from spawn
//! until `list_agents` over their MCP server counts every record; the baseline, measured in the
//! same run on the same files, is a plain sequential open/read/close loop over the record files
//! (what any program must at least do to know them). Both run with a warm page cache.
//!
//! Figures: steady launch (records as a clean stop leaves them) and the first launch after a
//! crash (two thirds of the records left "running": each is normalized and rewritten), at
//! 10,000 and 100,000 records, as medians of several launches. Targets: steady ≤ 2×, after a
//! crash ≤ 3× the read loop. Also printed: an empty data root's launch, the load line of the
//! app's log, the process's peak open files against its limit, and the load average.
//!
//! `cargo bench --bench launch [-- N...]` (default 10000 100000).

#[path = "../crates/paseo-core/benches/support/seed.rs"]
mod seed;
mod support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 5;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    let apps = [
        App {
            name: "paseo-headless",
            exe: Path::new(env!("CARGO_BIN_EXE_paseo-headless")),
            args: &[],
        },
        App {
            name: "paseo-desktop --headless",
            exe: Path::new(env!("CARGO_BIN_EXE_paseo-desktop")),
            args: &["--headless"],
        },
    ];
    println!("launch benchmark, {}", support::machine());

    let empty = tempfile::tempdir().unwrap();
    let home = empty.path().join("home");
    for app in &apps {
        let t = median((0..RUNS).map(|_| app.launch(&home, 0).0).collect());
        println!(
            "empty data root, {}: launch → queryable {}",
            app.name,
            ms(t)
        );
    }

    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let started = Instant::now();
        let paths = seed::seed(&home, n);
        let bytes: u64 = paths
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .sum();
        println!(
            "\n{n} records, {:.0} bytes each on average (seeded in {:.1} s)",
            bytes as f64 / n as f64,
            started.elapsed().as_secs_f64()
        );
        read_loop(&paths); // warms the page cache, like the launches after it
        let base = median((0..RUNS).map(|_| read_loop(&paths)).collect());
        println!(
            "  baseline: sequential open/read/close of every record: {}",
            ms(base)
        );
        // One launch first: it registers nothing new, but a first start on a seeded root may
        // still write; the timed ones then see the root as a clean stop leaves it.
        apps[0].launch(&home, n);
        for app in &apps {
            let mut steady = Vec::new();
            let mut fds = 0;
            for _ in 0..RUNS {
                let (t, peak) = app.launch(&home, n);
                steady.push(t);
                fds = fds.max(peak);
            }
            let steady = median(steady);
            println!(
                "  {}: steady launch → list_agents counts all {n}: {} = {:.2}× baseline (target ≤ 2×)",
                app.name,
                ms(steady),
                ratio(steady, base)
            );
            println!(
                "  {}: peak open files {fds} (limit {})",
                app.name,
                nofile_limit()
            );
        }
        for app in &apps {
            let mut crashed = Vec::new();
            let mut left_running = 0;
            for _ in 0..RUNS {
                left_running = seed::crash(&paths, 3);
                read_loop(&paths);
                crashed.push(app.launch(&home, n).0);
            }
            let crashed = median(crashed);
            let base_after_crash = median((0..RUNS).map(|_| read_loop(&paths)).collect());
            println!(
                "  {}: first launch after a crash ({left_running} records left running): {} = {:.2}× baseline {} (target ≤ 3×)",
                app.name,
                ms(crashed),
                ratio(crashed, base_after_crash),
                ms(base_after_crash)
            );
        }
        if let Some(line) = last_log_line(&home, "data root loaded") {
            println!("  app log: {line}");
        }
    }
    println!("\nload average after the run: {}", support::loadavg());
}

/// Opens, reads and closes every file in order; the time it took.
fn read_loop(paths: &[PathBuf]) -> Duration {
    let started = Instant::now();
    let mut buf = Vec::with_capacity(4096);
    let mut total = 0;
    for p in paths {
        buf.clear();
        let mut f = std::fs::File::open(p).unwrap();
        total += f.read_to_end(&mut buf).unwrap();
    }
    assert!(total > 0);
    started.elapsed()
}

/// A binary under test and the arguments that make it headless.
struct App {
    name: &'static str,
    exe: &'static Path,
    args: &'static [&'static str],
}

impl App {
    /// Starts the app on `home`, times spawn → a `list_agents` that counts `n` agents, then
    /// stops it with SIGTERM and waits for a clean exit. Also returns the most files it held
    /// open while it was being asked.
    fn launch(&self, home: &Path, n: usize) -> (Duration, usize) {
        let mcp_json = home.join("mcp.json");
        let started = Instant::now();
        let mut child = Command::new(self.exe)
            .args(self.args)
            .env("PASEO_HOME", home)
            .env_remove("PASEO_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut peak_fds = 0;
        let elapsed = loop {
            if let Some(total) = total_agents(&mcp_json, home) {
                if total == n {
                    break started.elapsed();
                }
                panic!("{} counts {total} agents, {n} were seeded", self.name);
            }
            peak_fds = peak_fds.max(open_files(child.id()));
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{} exited at start: {status}", self.name);
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "{} did not answer within 2 min",
                self.name
            );
            std::thread::sleep(Duration::from_micros(500));
        };
        peak_fds = peak_fds.max(open_files(child.id()));
        stop(&mut child);
        (elapsed, peak_fds)
    }
}

fn stop(child: &mut Child) {
    // SAFETY: signalling our own child by pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(status.success(), "the app did not stop cleanly: {status}");
}

/// `list_agents {limit: 1}`'s total over the app's MCP server (plain HTTP/1.1 on loopback with
/// the user token); None while the server is not up yet.
fn total_agents(mcp_json: &Path, home: &Path) -> Option<usize> {
    let info: serde_json::Value = serde_json::from_slice(&std::fs::read(mcp_json).ok()?).ok()?;
    let url = info["url"].as_str()?;
    let rest = url.strip_prefix("http://")?;
    let (host, path) = rest.split_at(rest.find('/')?);
    let token = std::fs::read_to_string(home.join("mcp-token")).ok()?;
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_agents", "arguments": {"limit": 1}}})
    .to_string();
    let mut stream = std::net::TcpStream::connect(host).ok()?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        token.trim(),
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    let at = reply.find("\"total\":")? + "\"total\":".len();
    let digits: String = reply[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn nofile_limit() -> String {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        format!("{} soft / {} hard", limit.rlim_cur, limit.rlim_max)
    } else {
        "unknown".into()
    }
}

fn last_log_line(home: &Path, needle: &str) -> Option<String> {
    let logs = std::fs::read_dir(home.join("logs")).ok()?;
    let mut files: Vec<PathBuf> = logs.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let text = std::fs::read_to_string(files.last()?).ok()?;
    text.lines()
        .rev()
        .find(|l| l.contains(needle))
        .map(|l| l.chars().take(240).collect())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
