//! A host's fleet in the window (SPEC 17), in the dark theme, against a real `sshd` on loopback
//! as a throwaway user (tests/hosts_support) with this build's paseo-headless installed: the
//! host's workspace and agent under its row (from `syncSnapshot {host}`, then its numbered
//! `paseo://host-event`s), the agent's pane with its output and "on box", a prompt from the
//! composer, its Changes, closing its tab (archived on the host) and Undo, a subagent it makes
//! detached from its track, a subagent's turn held on the host (its tree's budget) allowed from
//! its pane here; the app's ssh killed
//! with the host unreachable: the row says disconnected, its rows greyed but kept; once it can
//! reconnect, by itself, it is connected again and what the agent did meanwhile is shown, once;
//! and after a restart with the host slow to answer, the host agent's tab waits for it.

use crate::common::{poll, tid, App, Harness, TIMEOUT};
use crate::helpers::{
    click_tab_close, git, kid, open_root, row_action, sel_pane, sel_row, sel_tab, sel_ws,
    spawn_script,
};
use crate::hosts::{create_agent, row, shot, wait_state};
use crate::hosts_support::{ssh_child, Sshd, HEADLESS};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const SLOW: Duration = Duration::from_secs(90);

/// How many timeline items of the pane say `text`.
async fn items_saying(app: &App, text: &str) -> u64 {
    app.execute(
        "return [...document.querySelectorAll('[data-testid=\"timeline-item\"]')]\
           .filter((el) => el.textContent.includes(arguments[0])).length",
        vec![json!(text)],
    )
    .await
    .as_u64()
    .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_a_host_fleet_under_its_row_through_a_dropped_connection() {
    let Some(mut sshd) = Sshd::start("uifleet") else {
        return;
    };
    paseo_core::hosts::install(&sshd.host("box"), &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    let h = Harness::builder("hosts_fleet")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    std::fs::write(
        h.home().join("config.json"),
        json!({"hosts": [{"name": "box", "ssh": "box"}]}).to_string(),
    )
    .unwrap();
    let config = sshd.dir.path().join("ssh_config");
    let app = h
        .launch_with(&[], &[("PASEO_SSH_CONFIG", config.to_str().unwrap())])
        .await;
    app.wait_ready().await;
    wait_state(&app, "box", "connected", SLOW).await;
    if let Some(pid) = sshd.host_backend() {
        sshd.backends.push(pid);
    }

    // A git repository of the host's user, for Changes.
    let proj = sshd.user.home.join("proj");
    let _ = std::fs::remove_dir_all(&proj);
    std::fs::create_dir_all(&proj).unwrap();
    git(&proj, &["init", "-q", "-b", "main"]);
    std::fs::write(proj.join("README"), "hi\n").unwrap();
    git(&proj, &["add", "-A"]);
    git(&proj, &["commit", "-q", "-m", "start"]);
    let owner = format!("{0}:{0}", sshd.user.name);
    let chowned = std::process::Command::new("chown")
        .args(["-R", &owner])
        .arg(&proj)
        .status()
        .unwrap();
    assert!(chowned.success());

    // An agent made on the host (as the form does): its workspace shows under the host's row.
    let there = proj.display().to_string();
    let agent = create_agent(
        &app,
        json!({"provider": "shell", "host": "box", "directory": there,
                "title": "far", "prompt": "echo first-$((20+1)); echo more >> README"}),
    )
    .await;
    let id = agent["id"].as_str().unwrap().to_string();
    let ws = agent["workspaceId"].as_str().unwrap().to_string();
    let under = format!("{} {}", row("box"), sel_ws(&ws));
    app.wait_for(&under).await;
    // Not among this machine's.
    assert_eq!(
        app.count(&format!(".sidebar-scroll > .projects {}", sel_ws(&ws)))
            .await,
        0
    );
    app.click(&under).await;
    app.click(&tid("tab-home")).await;
    let listed = format!("[data-testid=\"workspace-agent\"][data-agent-id=\"{id}\"]");
    app.click(&listed).await;
    app.wait_for(&sel_pane(&id)).await;
    app.wait_for_text(&tid("agent-host"), |t| t == "on box")
        .await;
    poll("the host agent's output", TIMEOUT, || async {
        (items_saying(&app, "first-21").await == 1).then_some(())
    })
    .await;
    shot(&app, "host-connected-dark").await;

    // A prompt from the composer that outlives the connection.
    app.wait_for_attr(&sel_pane(&id), "data-status", "idle")
        .await;
    app.type_into(&tid("composer-input"), "sleep 4; echo after-drop-$((40+2))")
        .await;
    app.click(&tid("composer-send")).await;
    app.wait_for_attr(&sel_pane(&id), "data-status", "running")
        .await;
    // The status bar counts the host's agents on their own, after this machine's none.
    app.wait_for_text("[data-testid=\"status-host\"][data-host=\"box\"]", |t| {
        t.contains("on box: 1 running · 1 total")
    })
    .await;
    assert!(
        app.text(&tid("status-line")).await.contains("0 running"),
        "this machine's own count stays its own"
    );
    // The host is unreachable a while (its sshd stopped: no new login) and the app's ssh dies.
    let sshd_pid = sshd.pid() as i32;
    // SAFETY: signals to processes this test started (sshd) or its app started (ssh).
    unsafe { libc::kill(sshd_pid, libc::SIGSTOP) };
    let ssh = ssh_child(app.pid()).expect("the app's ssh to the host");
    unsafe { libc::kill(ssh as i32, libc::SIGKILL) };
    wait_state(&app, "box", "disconnected", TIMEOUT).await;
    app.wait_for_text(&format!("{} {}", row("box"), tid("host-state")), |t| {
        t.starts_with("disconnected (last seen ")
    })
    .await;
    // Kept, greyed, readable; the open agent says its state is the last known.
    assert!(app.is_shown(&under).await, "the host's rows stay");
    app.wait_for_text(&tid("agent-host"), |t| t == "on box · not connected")
        .await;
    let opacity = app
        .execute(
            "return getComputedStyle(document.querySelector(arguments[0]).closest('.projects')).opacity",
            vec![json!(under)],
        )
        .await;
    assert!(
        opacity.as_str().and_then(|o| o.parse::<f64>().ok()) < Some(1.0),
        "greyed: {opacity}"
    );
    shot(&app, "host-disconnected-dark").await;
    // The agent finishes on the host meanwhile.
    tokio::time::sleep(Duration::from_secs(6)).await;
    unsafe { libc::kill(sshd_pid, libc::SIGCONT) };

    // It reconnects by itself, and what ran meanwhile shows, once.
    wait_state(&app, "box", "connected", SLOW).await;
    poll(
        "the output of the turn that ran meanwhile",
        TIMEOUT,
        || async { (items_saying(&app, "after-drop-42").await >= 1).then_some(()) },
    )
    .await;
    app.wait_for_attr(&sel_pane(&id), "data-status", "idle")
        .await;
    app.wait_for_text(&tid("agent-host"), |t| t == "on box")
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(items_saying(&app, "after-drop-42").await, 1, "shown once");
    assert_eq!(items_saying(&app, "first-21").await, 1, "shown once");

    // Changes: what the agent changed in the host's folder.
    app.click(&tid("changes-toggle")).await;
    app.wait_for("[data-testid=\"changes-file\"][data-path=\"README\"]")
        .await;
    app.click(&tid("changes-toggle")).await;

    // Closing its tab archives it on the host; Undo restores it there.
    let record = paseo_core::store::Layout::new(sshd.user.home.join(".paseo"))
        .record_path(&there, id.parse().unwrap());
    let archived_there = || {
        let v: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        v["archivedAt"].is_string()
    };
    click_tab_close(&app, &id).await;
    app.wait_count(&sel_tab(&id), 0).await;
    poll("the record archived on the host", TIMEOUT, || async {
        archived_there().then_some(())
    })
    .await;
    app.click(&tid("toast-undo")).await;
    poll("the record restored on the host", TIMEOUT, || async {
        (!archived_there()).then_some(())
    })
    .await;
    app.wait_for(&sel_tab(&id)).await;

    // A subagent the host agent makes through the host's own MCP server: in its track, and
    // detached from there (on the host).
    let script = spawn_script(&[kid("kid", "sleep 60")], "echo lead-done");
    let lead = create_agent(
        &app,
        json!({"provider": "shell", "host": "box", "workspaceId": ws,
            "title": "lead", "prompt": script}),
    )
    .await;
    open_root(&app, &lead).await;
    let row_sel = tid("track-row");
    app.wait_for(&row_sel).await;
    let kid_id = app.prop(&row_sel, "dataset.agentId").await;
    let kid_id = kid_id.as_str().unwrap().to_string();
    row_action(&app, &kid_id, "track-detach").await;
    let kid_record = paseo_core::store::Layout::new(sshd.user.home.join(".paseo"))
        .record_path(&there, kid_id.parse().unwrap());
    poll("the subagent detached on the host", TIMEOUT, || async {
        let v: Value = serde_json::from_slice(&std::fs::read(&kid_record).ok()?).ok()?;
        v["labels"]
            .get("paseo.parent-agent-id")
            .is_none()
            .then_some(())
    })
    .await;
    poll("the track to hide", TIMEOUT, || async {
        (!app.is_shown(&tid("track")).await).then_some(())
    })
    .await;

    // A turn held on the host: its tree's budget is 0 tokens, so every turn an agent asks for
    // waits for the user (SPEC 18, 14). The child's pane here shows the request; Allow from
    // here runs it there, once.
    let boss = create_agent(
        &app,
        json!({"provider": "shell", "host": "box", "workspaceId": ws, "title": "boss"}),
    )
    .await;
    let boss_id = boss["id"].as_str().unwrap().to_string();
    let set = app
        .call_ui(
            "/backend.js",
            "setBudget",
            vec![json!(boss_id), json!({"treeTokens": 0})],
        )
        .await;
    assert!(set.get("error").is_none(), "{set}");
    let script = spawn_script(&[kid("asked", "echo held-ran-$((3*5))")], "echo boss-done");
    let sent = app
        .call_ui(
            "/backend.js",
            "sendPrompt",
            vec![json!(boss_id), json!(script)],
        )
        .await;
    assert!(sent.get("error").is_none(), "{sent}");
    open_root(&app, &boss).await;
    let boss_rows = format!("{} {}", sel_pane(&boss_id), tid("track-row"));
    app.wait_for(&boss_rows).await;
    let held_id = app.prop(&boss_rows, "dataset.agentId").await;
    let held_id = held_id.as_str().unwrap().to_string();
    app.wait_for_attr(&sel_row(&held_id), "data-bucket", "needs_input")
        .await;
    app.click(&format!("{} {}", sel_row(&held_id), tid("track-open")))
        .await;
    let held_pane = sel_pane(&held_id);
    app.wait_for_text(&format!("{held_pane} {}", tid("permission-budget")), |t| {
        t.contains("budget: this tree used 0 of 0 tokens")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        items_saying(&app, "held-ran-15").await,
        0,
        "nothing held runs"
    );
    app.click(&format!("{held_pane} {}", tid("permission-allow")))
        .await;
    poll("the allowed turn's output", TIMEOUT, || async {
        (items_saying(&app, "held-ran-15").await == 1).then_some(())
    })
    .await;
    app.wait_for_attr(&held_pane, "data-status", "idle").await;
    // It ran there: the host's own timeline of the child has the output.
    let on_host = sshd
        .user
        .home
        .join(format!(".paseo/timelines/{held_id}.jsonl"));
    let text = std::fs::read_to_string(&on_host).unwrap_or_default();
    assert!(
        text.contains("held-ran-15"),
        "{}: {text}",
        on_host.display()
    );

    // The new-agent form with the host chosen, in the dark theme.
    app.click(&tid("new-agent")).await;
    app.click(&format!("{} option[value=\"box\"]", tid("new-agent-host")))
        .await;
    app.wait_for(&format!(
        "{} option[value=\"{ws}\"]",
        tid("new-agent-workspace")
    ))
    .await;
    shot(&app, "new-agent-on-host-dark").await;

    // Started again: the host agent's tab waits for its host to connect, then shows it.
    app.click(&tid("new-agent-cancel")).await;
    poll(
        "the layout with the host agent's tab saved",
        TIMEOUT,
        || async {
            let saved = std::fs::read_to_string(h.home().join("windows.json")).ok()?;
            saved.contains(&id).then_some(())
        },
    )
    .await;
    app.quit().await;
    poll("the app to release the data root", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;
    // The host slow to answer (its sshd stopped): the window is up before the host is.
    unsafe { libc::kill(sshd_pid, libc::SIGSTOP) };
    let app = h
        .launch_with(&[], &[("PASEO_SSH_CONFIG", config.to_str().unwrap())])
        .await;
    app.wait_ready().await;
    wait_state(&app, "box", "connecting", TIMEOUT).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    unsafe { libc::kill(sshd_pid, libc::SIGCONT) };
    wait_state(&app, "box", "connected", SLOW).await;
    app.wait_for(&sel_tab(&id)).await;
}
