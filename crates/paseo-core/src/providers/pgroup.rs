//! Process groups as the system shows them: signalling a group, finding its live members,
//! and stopping a whole group (SIGTERM, grace, SIGKILL) with the descendants that left it.

use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// How long a process group gets between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(3);

pub fn signal_group(pgid: i32, sig: i32) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg only sends a signal; a group that no longer exists yields ESRCH.
    unsafe {
        libc::killpg(pgid, sig);
    }
}

/// One line of /proc/<pid>/stat, the fields we use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ProcStat {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    /// Start time since boot, in clock ticks: with the pid, it names one process for good.
    start: u64,
    live: bool,
}

fn read_stat(pid: &str) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces and parentheses).
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        pid: pid.parse().ok()?,
        live: !matches!(*f.first()?, "Z" | "X"),
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

/// A process's start time since boot (clock ticks): with its pid, it names one process for good.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    read_stat(&pid.to_string())
        .filter(|p| p.live)
        .map(|p| p.start)
}

/// The live members of a process group (tests read an agent's group with it too).
pub fn group_members(pgid: i32) -> Vec<i32> {
    all_processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid && p.live)
        .map(|p| p.pid)
        .collect()
}

fn all_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            read_stat(name)
        })
        .collect()
}

/// Whether any live (non-zombie) process is still in the group.
pub fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    if cfg!(target_os = "linux") && Path::new("/proc/self/stat").exists() {
        all_processes().iter().any(|p| p.pgrp == pgid && p.live)
    } else {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }
}

/// Live descendants of `root` that left its process group (a CLI may start tools in their
/// own session, e.g. behind a PTY): the group signal would miss them.
fn strays(root: i32, pgid: i32) -> Vec<ProcStat> {
    let procs = all_processes();
    let mut found: Vec<ProcStat> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for p in procs.iter().filter(|p| p.ppid == parent && p.live) {
            if !found.iter().any(|f| f.pid == p.pid) {
                found.push(*p);
                frontier.push(p.pid);
            }
        }
    }
    found.retain(|p| p.pgrp != pgid);
    found
}

fn signal_strays(strays: &[ProcStat], sig: i32) {
    for p in strays {
        // Only the very process we saw: a recycled pid has another start time.
        if read_stat(&p.pid.to_string()).is_some_and(|now| now.start == p.start && now.live) {
            // SAFETY: kill only sends a signal.
            unsafe {
                libc::kill(p.pid, sig);
            }
        }
    }
}

fn strays_alive(strays: &[ProcStat]) -> bool {
    strays
        .iter()
        .any(|p| read_stat(&p.pid.to_string()).is_some_and(|now| now.start == p.start && now.live))
}

/// SIGTERM to the group, wait up to `grace` for the leader (if we have its exit watch) and every
/// other member to be gone, then SIGKILL whatever is left and wait (bounded) for it to go.
pub async fn terminate_group(
    pgid: i32,
    grace: Duration,
    leader: Option<watch::Receiver<Option<ExitStatus>>>,
) {
    let leader_gone = |l: &Option<watch::Receiver<Option<ExitStatus>>>| {
        l.as_ref().map(|rx| rx.borrow().is_some()).unwrap_or(true)
    };
    // Without an exit watch, the leader counts as ours only while it still leads the group.
    let leads = |p: &ProcStat| p.live && p.pgrp == pgid;
    let leader_ours = match &leader {
        Some(_) => !leader_gone(&leader),
        None => read_stat(&pgid.to_string()).is_some_and(|p| leads(&p)),
    };
    let strays = if leader_ours {
        strays(pgid, pgid)
    } else {
        Vec::new()
    };
    let gone = |leader: &Option<watch::Receiver<Option<ExitStatus>>>| {
        leader_gone(leader) && !group_alive(pgid) && !strays_alive(&strays)
    };
    if gone(&leader) {
        return;
    }
    signal_group(pgid, libc::SIGTERM);
    signal_strays(&strays, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if gone(&leader) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tracing::debug!(pgid, "process group outlived SIGTERM; sending SIGKILL");
    signal_group(pgid, libc::SIGKILL);
    signal_strays(&strays, libc::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if gone(&leader) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tracing::warn!(pgid, "process group still present after SIGKILL");
}
