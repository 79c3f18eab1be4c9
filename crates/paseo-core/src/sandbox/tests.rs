//! The box from inside: a real shell in each engine tries what an agent must not do.

use std::path::{Path, PathBuf};

use super::*;

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    home: PathBuf,
    cwd: PathBuf,
    tmp: PathBuf,
}

/// Where a test's world lives: outside `/tmp`, which every box replaces with the agent's
/// private temp folder (a user's home and data root are not under `/tmp` either).
pub(super) fn test_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("paseo-sandbox-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

fn world() -> World {
    let dir = test_dir();
    let root = canonical(dir.path());
    let data = root.join("paseo-home");
    let home = root.join("home");
    let cwd = home.join("src/app");
    let tmp = data.join("tmp/agent");
    for d in [&data, &cwd, &tmp, &home.join(".ssh")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(data.join("mcp-token"), "user-token-secret").unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "private-key").unwrap();
    std::fs::write(home.join(".netrc"), "machine x password p").unwrap();
    std::fs::write(home.join("notes.txt"), "readable").unwrap();
    World {
        _dir: dir,
        root,
        data,
        home,
        cwd,
        tmp,
    }
}

fn engines() -> Vec<Engine> {
    let mut v = Vec::new();
    match bwrap::probe() {
        Ok(p) => v.push(Engine::Bwrap(p)),
        Err(e) => panic!("bubblewrap must work here (scripts/setup.sh installs it): {e}"),
    }
    match landlock::probe() {
        Ok(abi) => v.push(Engine::Landlock(abi)),
        Err(e) => panic!("Landlock must work here: {e}"),
    }
    v
}

fn plan(w: &World, engine: Engine) -> Plan {
    let config = SandboxConfig {
        hide: vec![
            w.home.join(".ssh").display().to_string(),
            w.home.join(".netrc").display().to_string(),
        ],
        ..SandboxConfig::default()
    };
    Containment::with_engine(engine, &config, &w.data)
        .agent_plan(&w.cwd, &w.tmp, false)
        .unwrap()
        .unwrap()
}

/// Runs `script` with `sh -c` in the box; its status and output.
fn run(plan: &Plan, cwd: &Path, script: &str) -> (bool, String) {
    let boxed = plan.command(Path::new("/bin/sh"), &["-c".into(), script.into()], cwd);
    let out = boxed
        .std_command()
        .unwrap()
        .current_dir(cwd)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn an_agent_writes_its_tree_and_reads_the_rest() {
    let w = world();
    for engine in engines() {
        let p = plan(&w, engine.clone());
        let (ok, out) = run(&p, &w.cwd, "echo made > made.txt && cat ../../notes.txt");
        assert!(ok, "{engine:?}: {out}");
        assert_eq!(out.trim(), "readable", "{engine:?}");
        assert_eq!(
            std::fs::read_to_string(w.cwd.join("made.txt")).unwrap(),
            "made\n"
        );
        let (ok, out) = run(&p, &w.cwd, "t=$(mktemp) && echo x > \"$t\" && cat \"$t\"");
        assert!(ok, "{engine:?}: a private temp works: {out}");
    }
}

#[test]
fn a_command_spawned_twice_is_boxed_both_times() {
    let w = world();
    for engine in engines() {
        let p = plan(&w, engine.clone());
        let target = w.home.join("planted-twice.txt");
        let script = format!("echo x > '{}'", target.display());
        let boxed = p.command(Path::new("/bin/sh"), &["-c".into(), script.into()], &w.cwd);
        let mut cmd = boxed.std_command().unwrap();
        cmd.current_dir(&w.cwd);
        for spawn in 0..2 {
            let out = cmd.output().unwrap();
            assert!(!out.status.success(), "{engine:?}, spawn {spawn}");
            assert!(
                !target.exists(),
                "{engine:?}, spawn {spawn} wrote {target:?}"
            );
        }
    }
}

#[test]
fn an_agent_cannot_read_the_data_root_or_the_secrets() {
    let w = world();
    for engine in engines() {
        let p = plan(&w, engine.clone());
        for secret in [
            w.data.join("mcp-token"),
            w.home.join(".ssh/id_ed25519"),
            w.home.join(".netrc"),
        ] {
            let (_, out) = run(&p, &w.cwd, &format!("cat '{}'", secret.display()));
            for word in ["user-token-secret", "private-key", "password"] {
                assert!(!out.contains(word), "{engine:?} read {secret:?}: {out}");
            }
        }
    }
}

#[test]
fn an_agent_cannot_write_outside_its_tree() {
    let w = world();
    for engine in engines() {
        let p = plan(&w, engine.clone());
        for target in [
            w.home.join("planted.txt"),
            w.data.join("config.json"),
            w.root.join("planted.txt"),
        ] {
            let (ok, _) = run(&p, &w.cwd, &format!("echo x > '{}'", target.display()));
            assert!(!ok, "{engine:?} wrote {target:?}");
            assert!(!target.exists(), "{engine:?} wrote {target:?}");
        }
    }
}

#[test]
fn a_symlink_in_the_tree_does_not_escape() {
    let w = world();
    std::os::unix::fs::symlink(w.home.join(".ssh"), w.cwd.join("keys")).unwrap();
    std::os::unix::fs::symlink(&w.home, w.cwd.join("up")).unwrap();
    for engine in engines() {
        let p = plan(&w, engine.clone());
        let (_, out) = run(&p, &w.cwd, "cat keys/id_ed25519");
        assert!(!out.contains("private-key"), "{engine:?}: {out}");
        let (ok, _) = run(&p, &w.cwd, "echo x > up/escaped.txt");
        assert!(!ok, "{engine:?}");
        assert!(!w.home.join("escaped.txt").exists(), "{engine:?}");
    }
}

#[test]
fn an_agent_cannot_read_another_process_environment() {
    let w = world();
    // A process outside the box with a token in its environment, as another agent has.
    let mut other = std::process::Command::new("sleep")
        .arg("30")
        .env("PASEO_MCP_TOKEN", "another-agents-token")
        .spawn()
        .unwrap();
    // Landlock is meant to refuse ptrace (and so /proc/<pid>/environ) outside its domain, but
    // this kernel lets a same-user process read it: bubblewrap's own PID namespace is what
    // holds here (docs/security.md says so of the fallback).
    for engine in engines()
        .into_iter()
        .filter(|e| matches!(e, Engine::Bwrap(_)))
    {
        let p = plan(&w, engine.clone());
        let (_, out) = run(
            &p,
            &w.cwd,
            &format!("cat /proc/{}/environ; cat /proc/1/environ", other.id()),
        );
        assert!(!out.contains("another-agents-token"), "{engine:?}: {out}");
    }
    let _ = other.kill();
    let _ = other.wait();
}

#[test]
fn a_cwd_holding_the_secrets_still_hides_them() {
    // A user who starts an agent in $HOME: the tree holds ~/.ssh and the data root.
    let w = world();
    std::fs::rename(&w.data, w.home.join(".paseo")).unwrap();
    let data = w.home.join(".paseo");
    for engine in engines() {
        let config = SandboxConfig {
            hide: vec![w.home.join(".ssh").display().to_string()],
            ..SandboxConfig::default()
        };
        let p = Containment::with_engine(engine.clone(), &config, &data)
            .agent_plan(&w.home, &data.join("tmp/agent"), false)
            .unwrap()
            .unwrap();
        // Into a folder that exists: under Landlock the folder holding a hidden path can only
        // be listed (a rule to make files in it would reach into the hidden path too).
        let (ok, out) = run(
            &p,
            &w.home,
            "echo x > src/mine.txt && cat .ssh/id_ed25519 .paseo/mcp-token",
        );
        assert!(
            !out.contains("private-key") && !out.contains("user-token"),
            "{engine:?}: {out}"
        );
        assert!(!ok, "{engine:?}: {out}");
        assert!(w.home.join("src/mine.txt").exists(), "{engine:?}");
        std::fs::remove_file(w.home.join("src/mine.txt")).unwrap();
    }
}

#[test]
fn off_and_unconfined_give_no_plan_and_unavailable_refuses() {
    let w = world();
    let off = Containment::detect(
        &SandboxConfig {
            enabled: false,
            ..SandboxConfig::default()
        },
        &w.data,
    );
    assert_eq!(off, Containment::Off);
    assert_eq!(off.agent_plan(&w.cwd, &w.tmp, false), Ok(None));
    let on = Containment::detect(&SandboxConfig::default(), &w.data);
    assert!(matches!(on, Containment::On { .. }), "{on:?}");
    assert_eq!(on.agent_plan(&w.cwd, &w.tmp, true), Ok(None));
    let none = Containment::Unavailable {
        reason: "bubblewrap (bwrap) is not installed".into(),
    };
    let err = none.agent_plan(&w.cwd, &w.tmp, false).unwrap_err();
    assert!(
        err.contains("bubblewrap") && err.contains("sandbox"),
        "{err}"
    );
    assert_eq!(none.agent_plan(&w.cwd, &w.tmp, true), Ok(None));
}

#[test]
fn git_dirs_of_a_checkout_and_a_linked_worktree() {
    let d = tempfile::tempdir().unwrap();
    let repo = canonical(d.path()).join("repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "i",
    ]);
    assert_eq!(git_dirs(&repo.join("sub")), [repo.join(".git")]);
    let wt = canonical(d.path()).join("wt");
    git(&["worktree", "add", "-q", wt.to_str().unwrap(), "-b", "b"]);
    let dirs = git_dirs(&wt);
    assert_eq!(dirs, [repo.join(".git/worktrees/wt"), repo.join(".git")]);
    assert!(git_dirs(&canonical(d.path())).is_empty());
}

#[test]
fn a_protected_file_in_a_write_tree_is_read_only() {
    // A CLI's settings in its state folder: the agent reads them, never writes them.
    let w = world();
    let state = w.home.join(".claude");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("settings.json"), "{}\n").unwrap();
    // Transcripts go to a subfolder: under Landlock a folder holding a protected file can only
    // be listed, its other entries written (docs/security.md).
    std::fs::create_dir_all(state.join("projects")).unwrap();
    for engine in engines() {
        let mut p = plan(&w, engine.clone());
        p.write(&state);
        p.protect(&state.join("settings.json"));
        let (ok, out) = run(
            &p,
            &w.cwd,
            &format!(
                "cat '{s}/settings.json' && echo x > '{s}/projects/transcript' && echo '{{\"hooks\":1}}' > '{s}/settings.json'",
                s = state.display()
            ),
        );
        assert!(!ok, "{engine:?}: {out}");
        assert!(out.contains("{}"), "{engine:?} reads it: {out}");
        assert_eq!(
            std::fs::read_to_string(state.join("settings.json")).unwrap(),
            "{}\n"
        );
        assert!(
            state.join("projects/transcript").exists(),
            "{engine:?}: the rest of the folder is writable: {out}"
        );
        std::fs::remove_file(state.join("projects/transcript")).unwrap();
    }
}

#[test]
fn a_read_tree_in_a_hidden_path_keeps_the_write_tree_inside_it_writable() {
    // The app's git sees the repository's worktrees in the data root and writes the one it
    // works on: the worktrees folder read, one worktree in it written, the rest still hidden.
    let w = world();
    let group = w.data.join("worktrees/abc");
    let own = group.join("own");
    let sibling = group.join("sibling");
    for d in [&own, &sibling] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(sibling.join("work.txt"), "sibling's").unwrap();
    for engine in engines() {
        let mut p = plan(&w, engine.clone());
        p.read(&group);
        p.write(&own);
        let (ok, out) = run(
            &p,
            &w.cwd,
            &format!(
                "cat '{s}/work.txt' && echo x > '{o}/new' && ls '{s}'",
                s = sibling.display(),
                o = own.display()
            ),
        );
        assert!(ok, "{engine:?}: {out}");
        assert!(out.contains("sibling's"), "{engine:?}: {out}");
        assert!(own.join("new").exists(), "{engine:?}: {out}");
        std::fs::remove_file(own.join("new")).unwrap();
        let (ok, out) = run(
            &p,
            &w.cwd,
            &format!("echo x > '{}/planted'", sibling.display()),
        );
        assert!(
            !ok && !sibling.join("planted").exists(),
            "{engine:?}: {out}"
        );
        let (ok, out) = run(&p, &w.cwd, &format!("cat '{}/mcp-token'", w.data.display()));
        assert!(
            !ok && !out.contains("user-token-secret"),
            "{engine:?}: {out}"
        );
    }
}
