//! Processes the harness starts: each in its own process group (so killing it takes the helpers
//! it spawned too), its output in files, marked in its environment so that anything it leaves
//! behind, even after an interrupted run, can be found and killed.

use super::harness::Shared;
use super::POLL;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The environment variable every harness process carries: `<test pid>-<harness dir name>`.
pub(super) const MARKER_VAR: &str = "PASEO_TEST_HARNESS";

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
    pub(super) fn spawn(name: &str, mut command: Command, shared: &Arc<Shared>) -> Proc {
        use std::os::unix::process::CommandExt;
        let n = shared.counter.fetch_add(1, Ordering::Relaxed);
        let stdout = shared.dir.join(format!("{n:02}-{name}.stdout"));
        let stderr = shared.dir.join(format!("{n:02}-{name}.stderr"));
        command
            .env(MARKER_VAR, &shared.marker)
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

    /// Adopts a child started elsewhere (already in its own group, output not in files), for
    /// infrastructure the failure screenshot needs alive.
    pub(super) fn adopt(name: &str, child: Child) -> Proc {
        Proc {
            name: name.to_string(),
            child,
            status: None,
            stdout: PathBuf::new(),
            stderr: PathBuf::new(),
            shared: None,
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

/// Every live process (pid, the value of its harness marker, its /proc entry) that carries one.
/// Zombies have an empty environ and are not seen; they own nothing either.
fn marked_processes() -> Vec<(u32, String, PathBuf)> {
    let prefix = format!("{MARKER_VAR}=");
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
        let marker = environ
            .split(|byte| *byte == 0)
            .find_map(|var| var.strip_prefix(prefix.as_bytes()));
        if let Some(marker) = marker {
            found.push((
                pid,
                String::from_utf8_lossy(marker).into_owned(),
                entry.path(),
            ));
        }
    }
    found
}

/// Processes (pid, command line) whose environment carries `marker`.
pub(super) fn processes_with_marker(marker: &str) -> Vec<(u32, String)> {
    marked_processes()
        .into_iter()
        .filter(|(_, found, _)| found == marker)
        .map(|(pid, _, dir)| {
            let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (pid, cmdline.trim().to_string())
        })
        .collect()
}

/// Kills what an earlier, interrupted test run left behind (its Drop never ran): processes whose
/// harness marker names a test process that no longer exists.
pub(super) fn reap_orphans() {
    for (pid, marker, _) in marked_processes() {
        let owner = marker.split('-').next().and_then(|o| o.parse::<u32>().ok());
        if let Some(owner) = owner {
            if !Path::new(&format!("/proc/{owner}")).exists() {
                // SAFETY: kill(2) on a process left by a dead test run.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
        }
    }
}

/// Runs `command` to its end and returns its stdout when it succeeded (None if it could not run
/// or failed).
pub async fn stdout_of(command: &mut tokio::process::Command) -> Option<String> {
    let output = command.output().await.ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}
