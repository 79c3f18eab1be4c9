//! Durability (SPEC 1: "write a temp file in the same folder, fsync, rename, fsync the folder"):
//! a SIGKILL keeps the page cache, so no crash test can tell a durable write from one that skips
//! its fsyncs; only a power cut could. What a power cut can do is fixed by the order of the
//! system calls, so this test records them: a child process runs the real runtime (its writer
//! writes records, the workspace registry and an inbox) under `strace -f`, and every durable
//! write is checked, on its own thread, to be: the temp file's last write, then an fsync of that
//! temp file, then its rename over the target, then an fsync of the target's folder before the
//! thread goes on. A write that skipped either fsync fails the test.
//!
//! strace rather than an LD_PRELOAD shim: Rust's std calls the fsync and rename system calls
//! through libc, but a shim sees only calls that go through the dynamic symbol it wraps, while
//! the kernel's view cannot be bypassed, and `-y` names every descriptor's file, so no
//! bookkeeping of descriptors is needed here.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use paseo_core::runtime::Caller;
use support::scripted::{req, workspace, Env};
use support::Door;

const CHILD_ENV: &str = "PASEO_DURABILITY_CHILD_ROOT";
const T: Duration = Duration::from_secs(10);

/// The child: a data root under `$PASEO_DURABILITY_CHILD_ROOT` gets a workspace (the registry),
/// a running lead and a subagent whose finish notice waits in the lead's inbox (records and an
/// inbox). Does nothing in a normal test run.
#[tokio::test]
async fn durability_child_writes() {
    let Ok(root) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = tempfile::tempdir_in(root).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let env = Env {
        work: work.canonicalize().unwrap(),
        dir,
        log: Default::default(),
    };
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    // The lead stays busy, so its subagent's notice is kept in its inbox until it is free.
    let lead = h.create(req(&ws, "hang")).await.unwrap();
    let mut k = req(&ws, "ok kid");
    k.caller = Caller::Agent(lead.id());
    k.subagent = true;
    k.notify_on_finish = Some(true);
    let kid = h.create(k).await.unwrap();
    h.wait(kid.id(), T).await.unwrap();
    let inbox = h.layout().inbox_path(lead.id());
    support::poll("the lead's inbox on disk", || inbox.exists().then_some(())).await;
    h.flush().await;
    rt.shutdown().await;
    // The parent needs to know which files are which.
    println!("DATA_ROOT={}", env.home().display());
    println!("INBOX={}", inbox.display());
}

/// One system call of one thread, as `strace -f -y` printed it.
#[derive(Debug)]
enum Call {
    /// A write to the file behind the descriptor (its path, from `-y`).
    Write(String),
    Fsync(String),
    Rename {
        from: String,
        to: String,
    },
}

/// The path strace's `-y` shows for the first descriptor argument: `7</a/b>` → `/a/b`.
fn fd_path(args: &str) -> Option<String> {
    let start = args.find('<')? + 1;
    let end = start + args[start..].find('>')?;
    Some(args[start..end].to_string())
}

/// The quoted strings among the arguments (strace quotes paths, with C escapes).
fn quoted(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        match (&mut cur, c) {
            (None, '"') => cur = Some(String::new()),
            (Some(s), '"') => {
                out.push(std::mem::take(s));
                cur = None;
            }
            (Some(s), '\\') => {
                if let Some(n) = chars.next() {
                    s.push(n);
                }
            }
            (Some(s), c) => s.push(c),
            (None, _) => {}
        }
    }
    out
}

/// The calls of each thread, in order. A call strace split (`<unfinished ...>` … `<... resumed>`)
/// is counted where it started: a thread makes one system call at a time.
fn parse(trace: &str) -> HashMap<u32, Vec<Call>> {
    let mut by_tid: HashMap<u32, Vec<Call>> = HashMap::new();
    for line in trace.lines() {
        let Some((tid, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(tid) = tid.trim().parse::<u32>() else {
            continue;
        };
        let rest = rest.trim_start();
        let Some((name, args)) = rest.split_once('(') else {
            continue;
        };
        let call = match name {
            "write" | "pwrite64" | "writev" | "pwritev" | "pwritev2" => {
                fd_path(args).map(Call::Write)
            }
            "fsync" | "fdatasync" => fd_path(args).map(Call::Fsync),
            "rename" | "renameat" | "renameat2" => {
                let q = quoted(args);
                (q.len() >= 2).then(|| Call::Rename {
                    from: q[q.len() - 2].clone(),
                    to: q[q.len() - 1].clone(),
                })
            }
            _ => None,
        };
        if let Some(c) = call {
            by_tid.entry(tid).or_default().push(c);
        }
    }
    by_tid
}

/// Every way a thread's durable write (a rename of a `.tmp-` file under `root`) broke the order,
/// and the targets of the writes that kept it.
fn check(by_tid: &HashMap<u32, Vec<Call>>, root: &Path) -> (Vec<String>, Vec<PathBuf>) {
    let mut faults = Vec::new();
    let mut durable = Vec::new();
    for calls in by_tid.values() {
        // A temp file's last event: `true` once fsynced after its last write.
        let mut synced: HashMap<&str, bool> = HashMap::new();
        // The folder whose fsync the thread still owes, and for which target.
        let mut owed: Option<(PathBuf, &str)> = None;
        for c in calls {
            match c {
                Call::Write(p) => {
                    synced.insert(p.as_str(), false);
                }
                Call::Fsync(p) => {
                    if owed.as_ref().is_some_and(|(d, _)| d == Path::new(p)) {
                        let (_, to) = owed.take().unwrap_or_default();
                        durable.push(PathBuf::from(to));
                    }
                    synced.insert(p.as_str(), true);
                }
                Call::Rename { from, to } => {
                    let tmp = Path::new(from);
                    let is_durable_write = tmp.starts_with(root)
                        && tmp
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with(".tmp-"));
                    if !is_durable_write {
                        continue;
                    }
                    if let Some((_, prev)) = owed.take() {
                        faults.push(format!("{prev}: renamed, but its folder was never fsynced"));
                    }
                    if synced.get(from.as_str()) != Some(&true) {
                        faults.push(format!("{to}: renamed before its temp file was fsynced"));
                    }
                    let dir = Path::new(to).parent().unwrap_or(root).to_path_buf();
                    owed = Some((dir, to));
                }
            }
        }
        if let Some((_, to)) = owed {
            faults.push(format!("{to}: renamed, but its folder was never fsynced"));
        }
    }
    (faults, durable)
}

#[test]
fn every_durable_write_fsyncs_its_file_before_the_rename_and_its_folder_after() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let trace_path = root_path.join("strace.txt");
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("strace")
        .args(["-f", "-qq", "-y", "-s", "4096", "-o"])
        .arg(&trace_path)
        .args([
            "-e",
            "trace=write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,rename,renameat,renameat2",
        ])
        .arg(&exe)
        .args(["--exact", "durability_child_writes", "--nocapture"])
        .env(CHILD_ENV, &root_path)
        .output()
        .expect("strace runs (scripts/setup.sh installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the traced child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |k: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("the child did not report {k}: {stdout}"))
    };
    let home = field("DATA_ROOT=");
    let inbox = field("INBOX=");
    let trace = std::fs::read_to_string(&trace_path).unwrap();
    let (faults, durable) = check(&parse(&trace), &home);
    assert!(
        faults.is_empty(),
        "writes that a power cut could lose or tear:\n{}",
        faults.join("\n")
    );

    // Every kind of durable file was written, and its writes were seen: the check cannot pass
    // on a trace that holds none.
    let records = home.join("agents");
    let registry = home.join("projects/workspaces.json");
    assert!(
        durable.iter().filter(|p| p.starts_with(&records)).count() >= 2,
        "no record writes (lead and subagent) in the trace: {durable:?}"
    );
    assert!(
        durable.contains(&registry),
        "no registry write: {durable:?}"
    );
    assert!(durable.contains(&inbox), "no inbox write: {durable:?}");
}
