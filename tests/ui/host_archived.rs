//! A host's archived agents in the sidebar's archived list (SPEC 17), against a real `sshd` on
//! loopback as a throwaway user (tests/hosts_support) with this build's paseo-headless installed.
//! An agent is made on the host and archived there by the host's own backend in an earlier run
//! of the app; in the next run (whose router has never seen it) it is listed under "On box",
//! opens read-only with its timeline from the host, and Restore brings it back on the host (its
//! record there says so) and into the host's fleet in the window; archived again, its section
//! follows; with the host unreachable the section says "not connected"; reconnected, the row's
//! Restore brings it back on the host. Screenshots light and dark.

use crate::common::{poll, tid, App, Harness, TIMEOUT};
use crate::helpers::{sel_tab, sel_ws};
use crate::hosts::{create_agent, row, shot, wait_state};
use crate::hosts_support::{ssh_child, Sshd, HEADLESS};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const SLOW: Duration = Duration::from_secs(90);

fn section(host: &str) -> String {
    format!("[data-testid=\"archived-host\"][data-host=\"{host}\"]")
}

async fn launch(h: &Harness, config: &Path, dark: bool) -> App {
    let mut env = vec![("PASEO_SSH_CONFIG", config.to_str().unwrap())];
    if dark {
        env.push(("GTK_THEME", "Adwaita:dark"));
    }
    let app = h.launch_with(&[], &env).await;
    app.wait_ready().await;
    wait_state(&app, "box", "connected", SLOW).await;
    app
}

async fn quit(h: &Harness, app: App) {
    app.quit().await;
    poll("the app to release the data root", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;
}

/// The host's own record of the agent, read on the host's disk.
fn record(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn archived_there(path: &Path) -> bool {
    record(path).is_some_and(|v| v["archivedAt"].is_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_an_agent_archived_on_the_host_is_listed_read_and_restored() {
    let Some(mut sshd) = Sshd::start("uiarchived") else {
        return;
    };
    paseo_core::hosts::install(&sshd.host("box"), &sshd.ssh_options(), Path::new(HEADLESS))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", sshd.log()));
    let h = Harness::builder("hosts_archived").build();
    std::fs::write(
        h.home().join("config.json"),
        json!({"hosts": [{"name": "box", "ssh": "box"}]}).to_string(),
    )
    .unwrap();
    let config = sshd.dir.path().join("ssh_config");

    // The first run: an agent made on the host, its turn done, archived there.
    let app = launch(&h, &config, false).await;
    if let Some(pid) = sshd.host_backend() {
        sshd.backends.push(pid);
    }
    let folder = sshd.user.home.join("far");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    std::os::unix::fs::chown(&folder, Some(sshd.user.uid), None).unwrap();
    let there = folder.display().to_string();
    let agent = create_agent(
        &app,
        json!({"provider": "shell", "host": "box", "directory": there,
                "title": "far away", "prompt": "echo said-on-box-$((30+3))"}),
    )
    .await;
    let id = agent["id"].as_str().unwrap().to_string();
    let ws = agent["workspaceId"].as_str().unwrap().to_string();
    let path = paseo_core::store::Layout::new(sshd.user.home.join(".paseo"))
        .record_path(&there, id.parse().unwrap());
    poll("the host agent's turn to end", TIMEOUT, || async {
        record(&path)
            .filter(|v| v["lastStatus"] == "idle")
            .map(|_| ())
    })
    .await;
    let archived: Value = app
        .call_ui("/backend.js", "archiveAgent", vec![json!(id)])
        .await;
    assert!(archived.get("error").is_none(), "{archived}");
    poll("the record archived on the host", TIMEOUT, || async {
        archived_there(&path).then_some(())
    })
    .await;
    quit(&h, app).await;

    // The next run has never seen it: the archived list finds it on the host.
    let app = launch(&h, &config, false).await;
    app.click(&tid("archived-toggle")).await;
    let listed = format!(
        "{} [data-testid=\"archived-row\"][data-agent-id=\"{id}\"]",
        section("box")
    );
    app.wait_for(&listed).await;
    app.wait_for_text(&format!("{} .archived-host-name", section("box")), |t| {
        t.eq_ignore_ascii_case("On box")
    })
    .await;
    assert_eq!(
        app.count(&format!(
            ".archived-rows [data-testid=\"archived-row\"][data-agent-id=\"{id}\"]"
        ))
        .await,
        0,
        "not among this machine's"
    );
    app.wait_for_text(&tid("archived-toggle"), |t| t.ends_with('1'))
        .await;
    // The count is this machine's and the connected host's; its tooltip says where.
    assert_eq!(
        app.prop(&tid("archived-toggle"), "title").await,
        json!("1 archived: 0 on this computer, 1 on box")
    );
    shot(&app, "archived-host-light").await;

    // Read-only, its timeline from the host.
    app.click(&format!("{listed} [data-testid=\"archived-open\"]"))
        .await;
    app.wait_for(&format!(
        "[data-testid=\"archived-view\"][data-agent-id=\"{id}\"]"
    ))
    .await;
    app.wait_for_text(&tid("archived-view-tag"), |t| t.ends_with("on box"))
        .await;
    poll("the host agent's timeline", TIMEOUT, || async {
        let n = app
            .execute(
                "return [...document.querySelectorAll('[data-testid=\"timeline-item\"]')]\
                   .filter((el) => el.textContent.includes('said-on-box-33')).length",
                vec![],
            )
            .await;
        (n.as_u64() >= Some(1)).then_some(())
    })
    .await;
    shot(&app, "archived-host-read-only-light").await;

    // Restore: on the host, and into the host's fleet in the window.
    app.click(&tid("archived-view-restore")).await;
    poll("the record restored on the host", TIMEOUT, || async {
        record(&path)
            .filter(|v| !v["archivedAt"].is_string())
            .map(|_| ())
    })
    .await;
    app.wait_for(&sel_tab(&id)).await;
    app.wait_for(&format!("{} {}", row("box"), sel_ws(&ws)))
        .await;
    app.wait_count(&listed, 0).await;

    // Archived again (its tab closed), then seen in the dark theme.
    let again: Value = app
        .call_ui("/backend.js", "archiveAgent", vec![json!(id)])
        .await;
    assert!(again.get("error").is_none(), "{again}");
    poll("the record archived again on the host", TIMEOUT, || async {
        archived_there(&path).then_some(())
    })
    .await;
    // Its section follows the host's archive as it happens.
    app.wait_for(&listed).await;
    quit(&h, app).await;
    let app = launch(&h, &config, true).await;
    // The list's being open is kept with the window's layout.
    if app.prop(&tid("archived-toggle"), "ariaExpanded").await != json!("true") {
        app.click(&tid("archived-toggle")).await;
    }
    app.wait_for(&listed).await;
    shot(&app, "archived-host-dark").await;

    // The host unreachable a while: its section says so and offers nothing it could not do.
    let sshd_pid = sshd.pid() as i32;
    // SAFETY: signals to processes this test started (sshd) or its app started (ssh).
    unsafe { libc::kill(sshd_pid, libc::SIGSTOP) };
    let ssh = ssh_child(app.pid()).expect("the app's ssh to the host");
    unsafe { libc::kill(ssh as i32, libc::SIGKILL) };
    app.wait_for_attr(&section("box"), "data-state", "disconnected")
        .await;
    app.wait_for_text(
        &format!("{} {}", section("box"), tid("archived-host-state")),
        |t| t == "not connected",
    )
    .await;
    app.wait_count(&listed, 0).await;
    assert_eq!(
        app.prop(&tid("archived-toggle"), "title").await,
        json!("0 archived: 0 on this computer, box not connected")
    );
    shot(&app, "archived-host-disconnected-dark").await;
    unsafe { libc::kill(sshd_pid, libc::SIGCONT) };
    wait_state(&app, "box", "connected", SLOW).await;

    // Back when it reconnects; the row's Restore (the whole batch) restores it on the host.
    app.click(&format!("{listed} [data-testid=\"restore\"]"))
        .await;
    poll("the record restored again on the host", TIMEOUT, || async {
        record(&path)
            .filter(|v| !v["archivedAt"].is_string())
            .map(|_| ())
    })
    .await;
    app.wait_for(&sel_tab(&id)).await;
    app.wait_count(&listed, 0).await;
    quit(&h, app).await;
}
