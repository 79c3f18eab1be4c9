//! One test's world: a temp `PASEO_HOME`, its own Xvfb display and (when asked) a private D-Bus
//! session bus, the environment every process gets, the data root as the test sees it (lock,
//! logs, records, a place to work), and the teardown that kills and checks everything started.

use super::proc::{processes_with_marker, reap_orphans, Proc, MARKER_VAR};
use super::{poll, screenshot_dir, APP, POLL, TIMEOUT};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// What every process and the [`super::App`] of one harness share.
pub(super) struct Shared {
    pub(super) test: String,
    /// Unique per harness: every process started carries it in its environment.
    pub(super) marker: String,
    /// Holds PASEO_HOME (`home/`) and the processes' stdout/stderr files.
    pub(super) dir: PathBuf,
    pub(super) display: Option<String>,
    pub(super) counter: AtomicU32,
    failure_shot: AtomicBool,
}

impl Shared {
    /// The first failing owner (harness, app or process) shoots the whole display, once.
    pub(super) fn failure_screenshot(&self) {
        if self.failure_shot.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(display) = &self.display {
            let path = screenshot_dir(&self.test).join("failure.png");
            if capture(display, "root", &path) {
                eprintln!("failure screenshot: {}", path.display());
            }
        }
    }
}

/// Writes the pixels of `window` (an X window id, or "root" for the whole screen) on `display`
/// to `path`; false if ImageMagick's `import` could not.
pub(super) fn capture(display: &str, window: &str, path: &Path) -> bool {
    let _ = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")));
    Command::new("import")
        .args(["-display", display, "-window", window])
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
        // Private, as the app keeps a data root (SPEC 16): a looser one is fixed at start with a
        // notice of its own, which tests counting notices do not expect.
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&home)
                .unwrap();
        }
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
    // -noreset: by default the server resets when its last client disconnects, and a client that
    // connects during the reset is refused. The harness's own short connections (`windows`,
    // screenshots) were often the last ones while the app started: GTK then failed to open the
    // display ("Failed to initialize gtk backend"), twice in a row under load.
    let mut command = Command::new("Xvfb");
    command
        .args([
            "-displayfd",
            "1",
            "-noreset",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ])
        .env(MARKER_VAR, marker)
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
    (Proc::adopt("Xvfb", child), format!(":{number}"))
}

fn start_bus(shared: &Arc<Shared>) -> (Proc, String) {
    let mut command = Command::new("dbus-daemon");
    command.args(["--session", "--nofork", "--nopidfile", "--print-address=1"]);
    let proc = Proc::spawn("dbus-daemon", command, shared);
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let text = proc.stdout();
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
    pub(super) shared: Arc<Shared>,
    bus: Option<(Proc, String)>,
    xvfb: Option<Proc>,
    pub(super) home: PathBuf,
    env: Vec<(String, String)>,
    _tmp: tempfile::TempDir,
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

    /// Starts the app in window mode directly (no WebDriver) and waits until its window shows.
    pub async fn spawn_window_app(&self) -> Proc {
        // GTK used to fail now and then to open the test's Xvfb display at start (tao panics
        // "Failed to initialize gtk backend"; about one launch in twenty on this VM, with the X
        // server alive), before Xvfb ran with -noreset (`start_xvfb`): such a launch is still
        // retried once, and said so on stderr. Any other failure stands.
        for attempt in 0..2 {
            let mut app = self.spawn_app(&[]);
            let deadline = std::time::Instant::now() + super::TIMEOUT;
            loop {
                if !self.windows("Paseo", true).await.is_empty() {
                    return app;
                }
                if app.exited().is_some() {
                    let gtk = app.stderr().contains("Failed to initialize gtk backend");
                    assert!(
                        gtk && attempt == 0,
                        "the app exited at start: {}",
                        app.stderr()
                    );
                    eprintln!("GTK could not open the display at start; launching again");
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "timed out waiting for window \"Paseo\" to be visible"
                );
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
        unreachable!("the second launch returned or failed above")
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
        self.wait_for_log_count(needle, 1).await
    }

    /// Waits until `needle` occurs at least `n` times in the log (e.g. the second start).
    pub async fn wait_for_log_count(&self, needle: &str, n: usize) {
        poll(&format!("{n} log lines {needle:?}"), TIMEOUT, || {
            let found = self.log_text().matches(needle).count() >= n;
            async move { found.then_some(()) }
        })
        .await
    }

    /// The agent's record as the app stored it: `$PASEO_HOME/agents/<cwd-with-dashes>/<id>.json`.
    pub fn agent_record(&self, id: &str) -> Value {
        let name = format!("{id}.json");
        let path = std::fs::read_dir(self.home.join("agents"))
            .unwrap()
            .flatten()
            .map(|dir| dir.path().join(&name))
            .find(|path| path.exists())
            .unwrap_or_else(|| panic!("no record for {id} under {}", self.home.display()));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    /// A fresh folder `name` beside the data root, for agents to work in (canonical, as the app
    /// stores workspace paths).
    pub fn work_dir(&self, name: &str) -> PathBuf {
        let dir = self.shared.dir.join("work").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
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
        self.processes()
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
        let left = self.processes();
        if !left.is_empty() {
            eprintln!(
                "harness {}: processes left behind: {left:?}",
                self.shared.test
            );
        }
    }
}
