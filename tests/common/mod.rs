//! End-to-end harness: runs the real `paseo-desktop` binary on its own Xvfb display (and, when
//! asked, its own D-Bus session bus) with its own temporary `PASEO_HOME`, drives the real webview
//! over WebDriver (tauri-driver → WebKitWebDriver) with fantoccini, answers native GTK dialogs
//! with xdotool, reads and clicks the tray menu over D-Bus, and kills every process it started.
//!
//! ```ignore
//! let h = Harness::new("my_test");                 // Xvfb + temp PASEO_HOME, no session bus
//! let app = h.launch(&[]).await;                   // app under WebDriver, page loaded
//! app.wait_for_text(&tid("status-line"), |t| t.contains("running")).await;
//! app.click(&tid("new-agent")).await;
//! let (answered, ok) = tokio::join!(
//!     h.answer_dialog("Archive running agent?", Answer::Ok),
//!     app.click(&tid("tab-close")),
//! );
//! app.screenshot("after-archive").await;           // target/e2e-screenshots/my_test/…
//! ```
//!
//! Every wait is bounded polling ([`TIMEOUT`] unless given). A test that panics leaves a
//! screenshot of the whole display in `target/e2e-screenshots/<test>/failure.png`.

// Each test binary uses a different part of the harness.
#![allow(dead_code)]

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The app binary cargo built for this test run.
pub const APP: &str = env!("CARGO_BIN_EXE_paseo-desktop");
/// Default bound for every wait.
pub const TIMEOUT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(50);

/// CSS selector for a `data-testid`.
pub fn tid(testid: &str) -> String {
    format!("[data-testid=\"{testid}\"]")
}

/// Where screenshots go: `target/e2e-screenshots/<test>/<name>.png`.
pub fn screenshot_dir(test: &str) -> PathBuf {
    let target_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = target_tmp.parent().unwrap_or(target_tmp);
    target.join("e2e-screenshots").join(test)
}

/// Polls `check` every 50 ms until it returns `Some`, or panics with `what` after `timeout`.
pub async fn poll<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Processes

/// A child process running in its own process group; dropping it kills the whole group
/// (SIGTERM, then SIGKILL after 5 s), so helpers it spawned (WebKit processes, …) go too.
pub struct Proc {
    name: String,
    child: Child,
    status: Option<ExitStatus>,
    stdout: PathBuf,
    stderr: PathBuf,
    /// None for the harness' own infrastructure (Xvfb), which outlives the failure screenshot.
    shared: Option<Arc<Shared>>,
}

impl Proc {
    fn spawn(name: &str, mut command: Command, shared: &Arc<Shared>) -> Proc {
        use std::os::unix::process::CommandExt;
        let n = shared.counter.fetch_add(1, Ordering::Relaxed);
        let stdout = shared.dir.join(format!("{n:02}-{name}.stdout"));
        let stderr = shared.dir.join(format!("{n:02}-{name}.stderr"));
        command
            .env("PASEO_TEST_HARNESS", &shared.marker)
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap())
            .process_group(0);
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
        Proc {
            name: name.to_string(),
            child,
            status: None,
            stdout,
            stderr,
            shared: Some(shared.clone()),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status if the process has exited (reaps it).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Waits (bounded) for the process to exit and returns its status.
    pub async fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                return status;
            }
            if Instant::now() >= deadline {
                panic!(
                    "{} (pid {}) did not exit within {timeout:?}; stderr:\n{}",
                    self.name,
                    self.pid(),
                    self.stderr()
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Sends `signal` (e.g. `libc::SIGTERM`) to the process itself.
    pub fn signal(&self, signal: i32) {
        // SAFETY: plain kill(2) on a pid we spawned and have not reaped.
        unsafe { libc::kill(self.pid() as i32, signal) };
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Kills the process group and waits (bounded) until no member is left.
    pub fn kill(&mut self) {
        let group = self.pid() as i32;
        signal_group(group, libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while group_alive(group, &mut self.child) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        if group_alive(group, &mut self.child) {
            signal_group(group, libc::SIGKILL);
            let deadline = Instant::now() + Duration::from_secs(5);
            while group_alive(group, &mut self.child) && Instant::now() < deadline {
                std::thread::sleep(POLL);
            }
        }
        self.exited();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.as_ref().filter(|_| std::thread::panicking()) {
            shared.failure_screenshot();
            eprintln!(
                "--- {} (pid {}) stderr ---\n{}",
                self.name,
                self.pid(),
                self.stderr()
            );
        }
        self.kill();
    }
}

fn signal_group(group: i32, signal: i32) {
    // SAFETY: kill(2) on a process group we created (the leader's pid is its id).
    unsafe { libc::kill(-group, signal) };
}

/// Whether any process is left in `group` (reaping the leader so a zombie does not count).
fn group_alive(group: i32, leader: &mut Child) -> bool {
    let _ = leader.try_wait();
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-group, 0) == 0 }
}

/// Processes (pid, command line) whose environment carries `marker`.
fn processes_with_marker(marker: &str) -> Vec<(u32, String)> {
    let needle = format!("PASEO_TEST_HARNESS={marker}");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let hit = environ
            .split(|byte| *byte == 0)
            .any(|var| var == needle.as_bytes());
        // Zombies have an empty environ and cannot be seen here; they own nothing either.
        if hit {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((pid, cmdline.trim().to_string()));
        }
    }
    found
}

/// Kills what an earlier, interrupted test run left behind (its Drop never ran): processes whose
/// harness marker names a test process that no longer exists.
fn reap_orphans() {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let owner = environ
            .split(|byte| *byte == 0)
            .filter_map(|var| var.strip_prefix(b"PASEO_TEST_HARNESS="))
            .filter_map(|marker| {
                let marker = String::from_utf8_lossy(marker);
                marker.split('-').next()?.parse::<u32>().ok()
            })
            .next();
        if let Some(owner) = owner {
            if !Path::new(&format!("/proc/{owner}")).exists() {
                // SAFETY: kill(2) on a process left by a dead test run.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("no free loopback port")
}

fn tauri_driver() -> PathBuf {
    if let Some(found) = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("tauri-driver"))
            .find(|candidate| candidate.is_file())
    }) {
        return found;
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    let fallback = Path::new(&home).join(".cargo/bin/tauri-driver");
    assert!(
        fallback.is_file(),
        "tauri-driver not found (run scripts/setup.sh)"
    );
    fallback
}

// ---------------------------------------------------------------------------------------------
// The harness

struct Shared {
    test: String,
    /// Unique per harness: every process started carries it in its environment.
    marker: String,
    /// Holds PASEO_HOME (`home/`) and the processes' stdout/stderr files.
    dir: PathBuf,
    display: Option<String>,
    counter: AtomicU32,
    failure_shot: AtomicBool,
}

impl Shared {
    fn failure_screenshot(&self) {
        if self.failure_shot.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(display) = &self.display {
            let path = screenshot_dir(&self.test).join("failure.png");
            if screen_capture(display, &path) {
                eprintln!("failure screenshot: {}", path.display());
            }
        }
    }
}

fn screen_capture(display: &str, path: &Path) -> bool {
    let _ = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")));
    Command::new("import")
        .args(["-display", display, "-window", "root"])
        .arg(path)
        .status()
        .map(|status| status.success())
        .unwrap_or(false)
}

/// How to build a [`Harness`].
pub struct HarnessBuilder {
    test: String,
    display: bool,
    dbus: bool,
    env: Vec<(String, String)>,
}

impl HarnessBuilder {
    /// Start an Xvfb display (default: yes).
    pub fn display(mut self, yes: bool) -> Self {
        self.display = yes;
        self
    }

    /// Start a private D-Bus session bus (default: no; then `DBUS_SESSION_BUS_ADDRESS=disabled:`).
    /// Needed for single instance and the tray menu.
    pub fn dbus(mut self, yes: bool) -> Self {
        self.dbus = yes;
        self
    }

    /// Extra environment for every process the harness starts.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    pub fn build(self) -> Harness {
        reap_orphans();
        let tmp = tempfile::Builder::new()
            .prefix(&format!("paseo-e2e-{}-", self.test))
            .tempdir()
            .unwrap();
        let dir = tmp.path().to_path_buf();
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let marker = format!(
            "{}-{}",
            std::process::id(),
            dir.file_name().unwrap().to_string_lossy()
        );
        let mut shared = Shared {
            test: self.test.clone(),
            marker,
            dir: dir.clone(),
            display: None,
            counter: AtomicU32::new(0),
            failure_shot: AtomicBool::new(false),
        };
        let xvfb = self.display.then(|| {
            let (proc, display) = start_xvfb(&shared.marker);
            shared.display = Some(display);
            proc
        });
        let shared = Arc::new(shared);
        let bus = self.dbus.then(|| start_bus(&shared));
        Harness {
            shared,
            _tmp: tmp,
            home,
            bus,
            xvfb,
            env: self.env,
        }
    }
}

fn start_xvfb(marker: &str) -> (Proc, String) {
    use std::os::unix::process::CommandExt;
    // -displayfd: Xvfb picks a free display number and writes it once it accepts connections.
    let mut command = Command::new("Xvfb");
    command
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ])
        .env("PASEO_TEST_HARNESS", marker)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = command
        .spawn()
        .expect("cannot start Xvfb (run scripts/setup.sh)");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(TIMEOUT)
        .expect("Xvfb did not report a display");
    let number: u32 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("Xvfb printed {line:?} instead of a display number"));
    let proc = Proc {
        name: "Xvfb".into(),
        child,
        status: None,
        stdout: PathBuf::new(),
        stderr: PathBuf::new(),
        shared: None,
    };
    (proc, format!(":{number}"))
}

fn start_bus(shared: &Arc<Shared>) -> (Proc, String) {
    let mut command = Command::new("dbus-daemon");
    command.args(["--session", "--nofork", "--nopidfile", "--print-address=1"]);
    let proc = Proc::spawn("dbus-daemon", command, shared);
    let stdout = proc.stdout.clone();
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let text = std::fs::read_to_string(&stdout).unwrap_or_default();
        if let Some(line) = text.lines().next().filter(|_| text.contains('\n')) {
            return (proc, line.trim().to_string());
        }
        assert!(
            Instant::now() < deadline,
            "dbus-daemon printed no address; stderr:\n{}",
            proc.stderr()
        );
        std::thread::sleep(POLL);
    }
}

/// One test's world: a temp `PASEO_HOME`, maybe an Xvfb display and a session bus, and every
/// process started through it. Dropping it kills them all.
pub struct Harness {
    // Field order is drop order: bus before display, temp dir last.
    shared: Arc<Shared>,
    bus: Option<(Proc, String)>,
    xvfb: Option<Proc>,
    home: PathBuf,
    env: Vec<(String, String)>,
    _tmp: tempfile::TempDir,
}

/// What to press in a native dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Ok,
    Cancel,
}

impl Harness {
    /// A display and a temp `PASEO_HOME`, no session bus.
    pub fn new(test: &str) -> Harness {
        Harness::builder(test).build()
    }

    pub fn builder(test: &str) -> HarnessBuilder {
        HarnessBuilder {
            test: test.to_string(),
            display: true,
            dbus: false,
            env: Vec::new(),
        }
    }

    /// This test's `PASEO_HOME` (created, initially empty).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The X display, e.g. ":12".
    pub fn display(&self) -> &str {
        self.shared
            .display
            .as_deref()
            .expect("this harness has no display")
    }

    pub fn bus_address(&self) -> Option<&str> {
        self.bus.as_ref().map(|(_, address)| address.as_str())
    }

    /// The environment every process gets: PASEO_HOME, DISPLAY, the bus (or none), no
    /// accessibility bus, RUST_LOG=info unless the test sets it, plus the builder's extras.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PASEO_HOME".into(), self.home.display().to_string()),
            (
                "DBUS_SESSION_BUS_ADDRESS".into(),
                self.bus_address().unwrap_or("disabled:").to_string(),
            ),
            ("NO_AT_BRIDGE".into(), "1".into()),
            ("RUST_LOG".into(), "info".into()),
        ];
        if let Some(display) = &self.shared.display {
            env.push(("DISPLAY".into(), display.clone()));
        }
        env.extend(self.env.iter().cloned());
        env
    }

    /// A command with the harness environment (and no DISPLAY when there is no display).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        // Start from the runner's environment minus what the harness decides per test.
        command
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WEBKIT_DISABLE_DMABUF_RENDERER");
        for (key, value) in self.env() {
            command.env(key, value);
        }
        command
    }

    /// Starts a process from `command` in its own process group.
    pub fn spawn(&self, name: &str, command: Command) -> Proc {
        Proc::spawn(name, command, &self.shared)
    }

    /// Starts the app binary directly (no WebDriver) with `args`.
    pub fn spawn_app(&self, args: &[&str]) -> Proc {
        let mut command = self.command(APP);
        command.args(args);
        self.spawn("paseo-desktop", command)
    }

    /// Starts the app under tauri-driver and opens a WebDriver session on it; returns once the
    /// page has loaded.
    pub async fn launch(&self, args: &[&str]) -> App {
        self.launch_with(args, &[]).await
    }

    /// Like [`Harness::launch`] with extra environment for the app.
    pub async fn launch_with(&self, args: &[&str], env: &[(&str, &str)]) -> App {
        // A port chosen free can be taken by another process before tauri-driver binds it
        // (tests run in parallel, each app binds an MCP port): then the driver exits at once,
        // and a second pair of ports is tried.
        let mut attempt = 0;
        let (driver, address) = loop {
            attempt += 1;
            let port = free_port();
            let native_port = free_port();
            let mut command = self.command(tauri_driver());
            command.args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ]);
            for (key, value) in env {
                command.env(key, value);
            }
            let mut driver = self.spawn("tauri-driver", command);
            let address = format!("127.0.0.1:{port}");
            let native = format!("127.0.0.1:{native_port}");
            // tauri-driver listens at once but forwards to WebKitWebDriver, which may still be
            // starting: a session is only possible once both accept connections.
            let outcome = poll(
                "tauri-driver and WebKitWebDriver to listen",
                TIMEOUT,
                || {
                    let up = std::net::TcpStream::connect(&address).is_ok()
                        && std::net::TcpStream::connect(&native).is_ok();
                    let exited = driver.exited();
                    async move {
                        match exited {
                            Some(status) => Some(Err(status)),
                            None => up.then_some(Ok(())),
                        }
                    }
                },
            )
            .await;
            match outcome {
                Ok(()) => break (driver, address),
                Err(status) if attempt < 3 => {
                    eprintln!("tauri-driver exited early ({status}); retrying on other ports");
                }
                Err(status) => panic!("tauri-driver exited early: {status}\n{}", driver.stderr()),
            }
        };

        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".into(), json!("wry"));
        capabilities.insert(
            "tauri:options".into(),
            json!({ "application": APP, "args": args }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let session = bounded(
            "new session",
            ClientBuilder::new(connector)
                .capabilities(capabilities)
                .connect(&format!("http://{address}")),
        )
        .await;
        let client = match session {
            Ok(client) => client,
            Err(error) => panic!(
                "WebDriver session failed: {error}\ntauri-driver stderr:\n{}",
                driver.stderr()
            ),
        };
        let app = App {
            client,
            driver,
            shared: self.shared.clone(),
            home: self.home.clone(),
        };
        poll("the page to load", TIMEOUT, || async {
            let state = app
                .client
                .execute("return document.readyState", vec![])
                .await
                .ok()?;
            (state == json!("complete")).then_some(())
        })
        .await;
        app
    }

    // --- data root ---------------------------------------------------------------------------

    /// The pid recorded in `$PASEO_HOME/lock`, if any.
    pub fn lock_holder(&self) -> Option<u32> {
        std::fs::read_to_string(self.home.join("lock"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Waits until `$PASEO_HOME/lock` names `pid` (the process owns the data root).
    pub async fn wait_for_lock_holder(&self, pid: u32) {
        poll(&format!("pid {pid} to hold the data root"), TIMEOUT, || {
            let holder = self.lock_holder();
            async move { (holder == Some(pid)).then_some(()) }
        })
        .await
    }

    /// Whether the data-root lock is free right now (tries to take it, then lets it go).
    pub fn lock_is_free(&self) -> bool {
        use std::os::fd::AsRawFd;
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.home.join("lock"))
        else {
            return false;
        };
        // SAFETY: flock on a descriptor we own; closing it releases the lock.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
    }

    /// Everything written to `$PASEO_HOME/logs/` so far.
    pub fn log_text(&self) -> String {
        let mut text = String::new();
        if let Ok(entries) = std::fs::read_dir(self.home.join("logs")) {
            let mut paths: Vec<_> = entries.flatten().map(|entry| entry.path()).collect();
            paths.sort();
            for path in paths {
                text.push_str(&std::fs::read_to_string(path).unwrap_or_default());
            }
        }
        text
    }

    /// Waits until the logs contain `needle`.
    pub async fn wait_for_log(&self, needle: &str) {
        poll(&format!("log line {needle:?}"), TIMEOUT, || {
            let found = self.log_text().contains(needle);
            async move { found.then_some(()) }
        })
        .await
    }

    /// Waits until `needle` occurs at least `n` times in the log (e.g. the second start).
    pub async fn wait_for_log_count(&self, needle: &str, n: usize) {
        poll(&format!("{n} log lines {needle:?}"), TIMEOUT, || {
            let found = self.log_text().matches(needle).count() >= n;
            async move { found.then_some(()) }
        })
        .await
    }

    // --- X windows and native dialogs ---------------------------------------------------------

    fn xdotool(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("xdotool");
        command.env("DISPLAY", self.display());
        command
    }

    /// X window ids of top-level windows titled exactly `title`.
    pub async fn windows(&self, title: &str, only_visible: bool) -> Vec<u64> {
        let mut command = self.xdotool();
        command.arg("search");
        if only_visible {
            command.arg("--onlyvisible");
        }
        command.args(["--name", &format!("^{}$", regex_escape(title))]);
        let output = command.output().await.expect("cannot run xdotool");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Waits until a window titled `title` is visible (`true`) or none is (`false`).
    pub async fn wait_window_visible(&self, title: &str, visible: bool) {
        let what = format!(
            "window {title:?} to be {}",
            if visible { "visible" } else { "hidden" }
        );
        poll(&what, TIMEOUT, || async {
            let shown = !self.windows(title, true).await.is_empty();
            (shown == visible).then_some(())
        })
        .await
    }

    /// Asks the visible window titled `title` to close, as a window manager does when the user
    /// clicks its close button (a WM_DELETE_WINDOW client message).
    pub async fn close_window(&self, title: &str) {
        let ids = self.windows(title, true).await;
        assert!(!ids.is_empty(), "no visible window titled {title:?}");
        for id in ids {
            send_wm_delete(self.display(), id);
        }
    }

    /// Waits (bounded) for the native dialog titled exactly `title`, presses OK or Cancel, and
    /// waits until it is gone. GTK puts focus on Cancel: OK is Tab then Return, Cancel is Escape.
    pub async fn answer_dialog(&self, title: &str, answer: Answer) {
        let id = poll(&format!("dialog {title:?}"), TIMEOUT, || async {
            self.windows(title, true).await.first().copied()
        })
        .await;
        let keys: &[&str] = match answer {
            Answer::Ok => &["Tab", "Return"],
            Answer::Cancel => &["Escape"],
        };
        let status = self
            .xdotool()
            .args(["windowfocus", "--sync", &id.to_string()])
            .args(["key", "--delay", "50"])
            .args(keys)
            .status()
            .await
            .expect("cannot run xdotool");
        assert!(status.success(), "xdotool could not answer {title:?}");
        poll(&format!("dialog {title:?} to close"), TIMEOUT, || async {
            self.windows(title, true).await.is_empty().then_some(())
        })
        .await
    }

    /// Screenshot of the whole display (native dialogs included) to
    /// `target/e2e-screenshots/<test>/<name>.png`.
    pub fn screenshot_screen(&self, name: &str) -> PathBuf {
        let path = screenshot_dir(&self.shared.test).join(format!("{name}.png"));
        assert!(
            screen_capture(self.display(), &path),
            "import could not capture {}",
            self.display()
        );
        path
    }

    // --- tray ---------------------------------------------------------------------------------

    /// The tray menu `pid` exports on this harness' bus (waits until it is there).
    pub async fn tray_menu(&self, pid: u32) -> TrayMenu {
        let bus = self
            .bus_address()
            .expect("tray_menu needs Harness::builder(..).dbus(true)")
            .to_string();
        let dest = poll("the app's tray menu on the bus", TIMEOUT, || {
            let bus = bus.clone();
            async move {
                for name in unique_names(&bus).await {
                    if connection_pid(&bus, &name).await == Some(pid) {
                        let menu = TrayMenu {
                            bus: bus.clone(),
                            dest: name,
                        };
                        if !menu.try_items().await.is_empty() {
                            return Some(menu);
                        }
                    }
                }
                None
            }
        })
        .await;
        dest
    }

    /// Puts a tray host on this harness' bus: a StatusNotifierWatcher speaking the real D-Bus
    /// protocol that panels implement (KDE, GNOME's AppIndicator extension, XFCE, …).
    pub fn start_tray_host(&self) -> TrayHost {
        let bus = self
            .bus_address()
            .expect("start_tray_host needs Harness::builder(..).dbus(true)");
        TrayHost::start(bus)
    }

    // --- teardown -----------------------------------------------------------------------------

    /// Every live process started through this harness, directly or not (pid, command line).
    pub fn processes(&self) -> Vec<(u32, String)> {
        processes_with_marker(&self.shared.marker)
    }

    /// Kills everything this harness started and returns what survived (pid, command line):
    /// any process carrying this harness' marker in its environment. Empty means clean.
    pub fn shutdown(mut self) -> Vec<(u32, String)> {
        self.stop();
        processes_with_marker(&self.shared.marker)
    }

    fn stop(&mut self) {
        if let Some((mut bus, _)) = self.bus.take() {
            bus.kill();
        }
        if let Some(mut xvfb) = self.xvfb.take() {
            xvfb.kill();
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared.failure_screenshot();
        }
        self.stop();
        let left = processes_with_marker(&self.shared.marker);
        if !left.is_empty() {
            eprintln!(
                "harness {}: processes left behind: {left:?}",
                self.shared.test
            );
        }
    }
}

fn regex_escape(text: &str) -> String {
    let mut escaped = String::new();
    for c in text.chars() {
        if "\\.^$|?*+()[]{}".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

fn send_wm_delete(display: &str, window: u64) {
    use std::ffi::CString;
    use x11::xlib;
    let name = CString::new(display).unwrap();
    // SAFETY: plain Xlib calls on a connection opened and closed here; the event is fully
    // initialised before it is sent.
    unsafe {
        let dpy = xlib::XOpenDisplay(name.as_ptr());
        assert!(!dpy.is_null(), "cannot open display {display}");
        let protocols = xlib::XInternAtom(dpy, c"WM_PROTOCOLS".as_ptr(), xlib::False);
        let delete = xlib::XInternAtom(dpy, c"WM_DELETE_WINDOW".as_ptr(), xlib::False);
        let mut data = xlib::ClientMessageData::new();
        data.set_long(0, delete as std::os::raw::c_long);
        data.set_long(1, xlib::CurrentTime as std::os::raw::c_long);
        let mut event = xlib::XEvent {
            client_message: xlib::XClientMessageEvent {
                type_: xlib::ClientMessage,
                serial: 0,
                send_event: xlib::True,
                display: dpy,
                window: window as xlib::Window,
                message_type: protocols,
                format: 32,
                data,
            },
        };
        xlib::XSendEvent(dpy, window as xlib::Window, xlib::False, 0, &mut event);
        xlib::XFlush(dpy);
        xlib::XCloseDisplay(dpy);
    }
}

// ---------------------------------------------------------------------------------------------
// The app under WebDriver

/// The app running under tauri-driver with a WebDriver session. Dropping it kills tauri-driver's
/// process group: WebKitWebDriver, the app and its WebKit processes.
pub struct App {
    client: Client,
    home: PathBuf,
    shared: Arc<Shared>,
    driver: Proc,
}

/// Bounds one WebDriver round trip, so a wedged driver fails the test instead of hanging it.
async fn bounded<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(TIMEOUT, future).await {
        Ok(value) => value,
        Err(_) => panic!("WebDriver did not answer {what} within {TIMEOUT:?}"),
    }
}

impl App {
    /// The fantoccini client, for anything the helpers do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The element matching `selector` now (panics if there is none).
    pub async fn find(&self, selector: &str) -> Element {
        bounded("find", self.client.find(Locator::Css(selector)))
            .await
            .unwrap_or_else(|error| panic!("no element {selector}: {error}"))
    }

    /// All elements matching `selector` now.
    pub async fn find_all(&self, selector: &str) -> Vec<Element> {
        bounded("find_all", self.client.find_all(Locator::Css(selector)))
            .await
            .unwrap_or_default()
    }

    /// The text of the element matching `selector` now.
    pub async fn text(&self, selector: &str) -> String {
        let element = self.find(selector).await;
        bounded("text", element.text())
            .await
            .unwrap_or_else(|error| panic!("no text for {selector}: {error}"))
    }

    /// Whether the element matching `selector` is shown (has a layout box and is not hidden).
    pub async fn is_shown(&self, selector: &str) -> bool {
        let script = "const el = document.querySelector(arguments[0]);
            if (!el) return false;
            const box = el.getBoundingClientRect();
            return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';";
        self.execute(script, vec![json!(selector)]).await == json!(true)
    }

    /// The document's title.
    pub async fn title(&self) -> String {
        bounded("title", self.client.title())
            .await
            .unwrap_or_else(|error| panic!("no title: {error}"))
    }

    /// Waits for an element matching `selector`.
    pub async fn wait_for(&self, selector: &str) -> Element {
        poll(&format!("element {selector}"), TIMEOUT, || async {
            self.client.find(Locator::Css(selector)).await.ok()
        })
        .await
    }

    /// Waits until the text of `selector` satisfies `check`; returns that text.
    pub async fn wait_for_text(&self, selector: &str, check: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Ok(element) = self.client.find(Locator::Css(selector)).await {
                if let Ok(text) = element.text().await {
                    if check(&text) {
                        return text;
                    }
                    last = text;
                }
            }
            if Instant::now() >= deadline {
                panic!("timed out waiting for the text of {selector}; last text: {last:?}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until attribute `name` of `selector` equals `value`.
    pub async fn wait_for_attr(&self, selector: &str, name: &str, value: &str) {
        poll(
            &format!("{selector} to have {name}={value:?}"),
            TIMEOUT,
            || async {
                let element = self.client.find(Locator::Css(selector)).await.ok()?;
                let found = element.attr(name).await.ok()??;
                (found == value).then_some(())
            },
        )
        .await
    }

    /// Waits for `selector` and clicks it.
    pub async fn click(&self, selector: &str) {
        let element = self.wait_for(selector).await;
        bounded("click", element.click())
            .await
            .unwrap_or_else(|error| panic!("cannot click {selector}: {error:?}"));
    }

    /// Runs `script` in the page (`arguments` holds `args`) and returns its result.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        bounded("execute", self.client.execute(script, args))
            .await
            .unwrap_or_else(|error| panic!("script failed: {error}\n{script}"))
    }

    /// Runs `script` in the page; it finishes by calling the last argument with its result.
    pub async fn execute_async(&self, script: &str, args: Vec<Value>) -> Value {
        bounded("execute_async", self.client.execute_async(script, args))
            .await
            .unwrap_or_else(|error| panic!("async script failed: {error}\n{script}"))
    }

    /// Calls a function exported by a UI module, e.g. `call_ui("/backend.js", "appInfo", [])`,
    /// awaiting it if it returns a promise. A rejection comes back as `{"error": message}`.
    pub async fn call_ui(&self, module: &str, function: &str, args: Vec<Value>) -> Value {
        let script = r#"
            const [module, name, args, done] = arguments;
            import(module)
              .then((m) => m[name](...args))
              .then((value) => done(value === undefined ? null : value),
                    (error) => done({ error: String(error && error.message || error) }));
        "#;
        self.execute_async(script, vec![json!(module), json!(function), json!(args)])
            .await
    }

    /// Opens a native confirm through `ui/backend.js` (as every destructive gesture will) and
    /// returns what the UI received: true for OK, false for Cancel. Pair it with
    /// [`Harness::answer_dialog`] in a `tokio::join!`.
    pub async fn confirm(&self, title: &str, message: &str) -> Value {
        self.call_ui("/backend.js", "confirm", vec![json!(title), json!(message)])
            .await
    }

    /// Screenshot of the app's main window as the X server shows it (what a user sees) to
    /// `target/e2e-screenshots/<test>/<name>.png`. Take it after waiting for the state to show.
    /// (WebKitWebDriver's own screenshot command hangs under Xvfb here, so this reads the
    /// window's pixels from the display instead.)
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let display = self
            .shared
            .display
            .clone()
            .expect("screenshots need a display");
        let output = tokio::process::Command::new("xdotool")
            .env("DISPLAY", &display)
            .args(["search", "--onlyvisible", "--name", "^Paseo$"])
            .output()
            .await
            .expect("cannot run xdotool");
        let window = String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .map(str::to_string)
            .unwrap_or_else(|| "root".to_string());
        let path = screenshot_dir(&self.shared.test).join(format!("{name}.png"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let status = tokio::process::Command::new("import")
            .args(["-display", &display, "-window", &window])
            .arg(&path)
            .status()
            .await
            .expect("cannot run import");
        assert!(status.success(), "import could not capture window {window}");
        path
    }

    /// The pid of the app process (found by its executable and this harness' marker).
    pub fn pid(&self) -> u32 {
        let app = std::fs::canonicalize(APP).unwrap();
        let pids: Vec<u32> = processes_with_marker(&self.shared.marker)
            .into_iter()
            .filter(|(pid, _)| {
                std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() == Some(&app)
            })
            .map(|(pid, _)| pid)
            .collect();
        assert_eq!(pids.len(), 1, "expected one app process, found {pids:?}");
        pids[0]
    }

    /// The data root the app was given.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Ends the WebDriver session, then stops tauri-driver and everything under it.
    pub async fn quit(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.client.clone().close()).await;
        self.driver.kill();
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared.failure_screenshot();
        }
        // The driver's Drop kills its process group.
    }
}

// ---------------------------------------------------------------------------------------------
// MCP

/// Calls one MCP tool on the running app with the user token (curl speaking streamable HTTP),
/// returning the tool result's structured content.
pub fn mcp_call(home: &std::path::Path, tool: &str, args: serde_json::Value) -> serde_json::Value {
    let url: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("mcp.json")).expect("mcp.json")).unwrap();
    let token = std::fs::read_to_string(home.join("mcp-token")).unwrap();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args}});
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "-N",
            "--fail-with-body",
            url["url"].as_str().unwrap(),
        ])
        .args(["-H", &format!("Authorization: Bearer {}", token.trim())])
        .args(["-H", "Content-Type: application/json"])
        .args(["-H", "Accept: application/json, text/event-stream"])
        .args(["-d", &body.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "curl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or_else(|| panic!("no SSE data in {text}"));
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_ne!(v["result"]["isError"], true, "{v}");
    v["result"]["structuredContent"].clone()
}

// ---------------------------------------------------------------------------------------------
// Tray over D-Bus

async fn gdbus(bus: &str, args: &[&str]) -> Option<String> {
    let output = tokio::process::Command::new("gdbus")
        .arg("call")
        .args(["--address", bus])
        .args(args)
        .output()
        .await
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

async fn unique_names(bus: &str) -> Vec<String> {
    let listing = gdbus(
        bus,
        &[
            "--dest",
            "org.freedesktop.DBus",
            "--object-path",
            "/org/freedesktop/DBus",
            "--method",
            "org.freedesktop.DBus.ListNames",
        ],
    )
    .await
    .unwrap_or_default();
    listing
        .split('\'')
        .filter(|part| part.starts_with(':'))
        .map(str::to_string)
        .collect()
}

async fn connection_pid(bus: &str, name: &str) -> Option<u32> {
    let reply = gdbus(
        bus,
        &[
            "--dest",
            "org.freedesktop.DBus",
            "--object-path",
            "/org/freedesktop/DBus",
            "--method",
            "org.freedesktop.DBus.GetConnectionUnixProcessID",
            name,
        ],
    )
    .await?;
    // "(uint32 1234,)"
    reply
        .trim()
        .trim_start_matches("(uint32 ")
        .trim_end_matches(",)")
        .parse()
        .ok()
}

/// The app's tray menu as a tray host sees it (com.canonical.dbusmenu, as exported by
/// libayatana-appindicator).
pub struct TrayMenu {
    bus: String,
    dest: String,
}

const TRAY_ITEM_PATH: &str = "/org/ayatana/NotificationItem/tray_icon_tray_app_main";
const TRAY_MENU_PATH: &str = "/org/ayatana/NotificationItem/tray_icon_tray_app_main/Menu";

impl TrayMenu {
    async fn try_items(&self) -> Vec<(i32, String)> {
        let layout = gdbus(
            &self.bus,
            &[
                "--dest",
                &self.dest,
                "--object-path",
                TRAY_MENU_PATH,
                "--method",
                "com.canonical.dbusmenu.GetLayout",
                "--",
                "0",
                "-1",
                "[\"label\"]",
            ],
        )
        .await
        .unwrap_or_default();
        parse_menu_layout(&layout)
    }

    /// The labelled items (id, label) in menu order; separators have no label and are left out.
    pub async fn items(&self) -> Vec<(i32, String)> {
        self.try_items().await
    }

    pub async fn labels(&self) -> Vec<String> {
        self.items()
            .await
            .into_iter()
            .map(|(_, label)| label)
            .collect()
    }

    /// Clicks the item labelled `label`, as a tray host does when the user picks it.
    pub async fn click(&self, label: &str) {
        let items = self.items().await;
        let id = items
            .iter()
            .find(|(_, text)| text == label)
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("no tray menu item {label:?} in {items:?}"));
        gdbus(
            &self.bus,
            &[
                "--dest",
                &self.dest,
                "--object-path",
                TRAY_MENU_PATH,
                "--method",
                "com.canonical.dbusmenu.Event",
                &id.to_string(),
                "clicked",
                "<0>",
                "0",
            ],
        )
        .await
        .unwrap_or_else(|| panic!("clicking tray item {label:?} failed"));
    }

    /// The icon file the tray item shows now (the StatusNotifierItem's `IconName`, which
    /// libayatana-appindicator sets to the path of the PNG it was handed).
    pub async fn icon_file(&self) -> Option<PathBuf> {
        let reply = gdbus(
            &self.bus,
            &[
                "--dest",
                &self.dest,
                "--object-path",
                TRAY_ITEM_PATH,
                "--method",
                "org.freedesktop.DBus.Properties.Get",
                "org.kde.StatusNotifierItem",
                "IconName",
            ],
        )
        .await?;
        // "(<'/run/user/0/paseo-tray-123/tray-icon-main-1.png'>,)"
        let path = reply.split('\'').nth(1)?;
        Some(PathBuf::from(path))
    }

    /// Waits until the menu has an item labelled `label`.
    pub async fn wait_for_label(&self, label: &str) {
        poll(&format!("tray item {label:?}"), TIMEOUT, || async {
            self.labels()
                .await
                .iter()
                .any(|text| text == label)
                .then_some(())
        })
        .await
    }
}

/// Pulls `(id, label)` pairs out of gdbus' text rendering of a dbusmenu layout, e.g.
/// `<(4, {'label': <'Hide window'>}, @av [])>`.
fn parse_menu_layout(layout: &str) -> Vec<(i32, String)> {
    let mut items = Vec::new();
    for chunk in layout.split("<(").skip(1) {
        let Some((id, rest)) = chunk.split_once(", ") else {
            continue;
        };
        let Ok(id) = id.trim().parse::<i32>() else {
            continue;
        };
        if let Some(after) = rest.split_once("'label': <'").map(|(_, after)| after) {
            if let Some((label, _)) = after.split_once("'>") {
                items.push((id, label.to_string()));
            }
        }
    }
    items
}

/// A minimal tray host: owns `org.kde.StatusNotifierWatcher` and records the items that
/// register, as a panel does. Dropping it leaves the bus (the tray host "goes away").
pub struct TrayHost {
    connection: zbus::blocking::Connection,
    registered: Arc<std::sync::Mutex<Vec<String>>>,
}

struct Watcher {
    registered: Arc<std::sync::Mutex<Vec<String>>>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    fn register_status_notifier_item(
        &mut self,
        service: String,
        #[zbus(header)] header: zbus::message::Header<'_>,
    ) {
        // Items register with a path (ayatana) or a bus name; keep the sender with it.
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        self.registered
            .lock()
            .unwrap()
            .push(format!("{sender}{service}"));
    }

    fn register_status_notifier_host(&mut self, _service: String) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.registered.lock().unwrap().clone()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

impl TrayHost {
    fn start(bus: &str) -> TrayHost {
        let registered = Arc::new(std::sync::Mutex::new(Vec::new()));
        let connection = zbus::blocking::connection::Builder::address(bus)
            .unwrap()
            .name("org.kde.StatusNotifierWatcher")
            .unwrap()
            .serve_at(
                "/StatusNotifierWatcher",
                Watcher {
                    registered: registered.clone(),
                },
            )
            .unwrap()
            .build()
            .expect("cannot become the StatusNotifierWatcher");
        TrayHost {
            connection,
            registered,
        }
    }

    /// What registered so far (sender + item path or name).
    pub fn registered(&self) -> Vec<String> {
        self.registered.lock().unwrap().clone()
    }

    /// Waits until some item has registered with this host.
    pub async fn wait_for_item(&self) -> String {
        poll("a tray item to register", TIMEOUT, || {
            let first = self.registered().into_iter().next();
            async move { first }
        })
        .await
    }

    pub fn connection(&self) -> &zbus::blocking::Connection {
        &self.connection
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_dbusmenu_layout() {
        let layout = "(uint32 2, (0, {'label': <'Label Empty'>}, [<(2, {'label': <'0 running · 0 need you · 0 total'>}, @av [])>, <(3, @a{sv} {}, @av [])>, <(4, {'label': <'Hide window'>}, @av [])>]))";
        assert_eq!(
            parse_menu_layout(layout),
            vec![
                (2, "0 running · 0 need you · 0 total".to_string()),
                (4, "Hide window".to_string())
            ]
        );
    }
}
