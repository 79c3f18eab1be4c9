//! Hosts in the window (SPEC 17, UI.md "Hosts"), against a real `sshd` on loopback as a
//! throwaway user (tests/hosts_support): the app's own `ssh` reaches it through an ssh config
//! Host alias (`PASEO_SSH_CONFIG`). A host row with its state in words and `data-state`; a host
//! without paseo-headless offering "Install on host…", installed after the native confirm and
//! then connected; "Add a host…" refusing a bad destination at its field and then adding one;
//! "Remove host" after its confirm; the new-agent form's Host field starting an agent there.
//! The tests need root (users, sshd); without it they say SKIPPED and return.

use crate::common::{poll, tid, Answer, App, Harness, TIMEOUT};
use crate::helpers::sel_pane;
use crate::hosts_support::{ssh_child, Sshd};
use serde_json::{json, Value};
use std::time::Duration;

/// Installing copies the whole debug binary over ssh, then connects: longer than a click.
const SLOW: Duration = Duration::from_secs(120);

/// A host's row in the sidebar.
pub fn row(host: &str) -> String {
    format!("[data-testid=\"host-row\"][data-host=\"{host}\"]")
}

/// The app with `hosts` in its config.json, its ssh pointed at the test's sshd.
async fn launch(h: &Harness, sshd: &Sshd, hosts: Value) -> App {
    std::fs::write(
        h.home().join("config.json"),
        json!({ "hosts": hosts }).to_string(),
    )
    .unwrap();
    let config = sshd.dir.path().join("ssh_config");
    let app = h
        .launch_with(&[], &[("PASEO_SSH_CONFIG", config.to_str().unwrap())])
        .await;
    app.wait_ready().await;
    app
}

/// Waits until the host's row says `state` (its `data-state`).
pub async fn wait_state(app: &App, host: &str, state: &str, within: Duration) {
    let sel = row(host);
    poll(&format!("host {host} {state}"), within, || async {
        let now = app.prop(&sel, "dataset.state").await;
        (now == json!(state)).then_some(())
    })
    .await
}

fn configured_hosts(h: &Harness) -> Vec<String> {
    let config: Value =
        serde_json::from_slice(&std::fs::read(h.home().join("config.json")).unwrap()).unwrap();
    config["hosts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|h| h["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// An agent created through the page's backend module, as the new-agent form sends it
/// (`fields`: provider, host, directory or workspaceId, title, prompt); an error answer fails
/// the test.
pub async fn create_agent(app: &App, fields: Value) -> Value {
    let agent: Value = app
        .call_ui("/backend.js", "createAgent", vec![fields])
        .await;
    assert!(agent.get("error").is_none(), "{agent}");
    agent
}

/// A screenshot once the page has settled (transitions done).
pub async fn shot(app: &App, name: &str) {
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.screenshot(name).await;
}

/// The host's backend is stopped at the end (it outlives ssh by design).
fn adopt_backend(sshd: &mut Sshd) {
    if let Some(pid) = sshd.host_backend() {
        if !sshd.backends.contains(&pid) {
            sshd.backends.push(pid);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_rows_install_add_remove_and_an_agent_from_the_form() {
    let Some(mut sshd) = Sshd::start("uirows") else {
        return;
    };
    let h = Harness::new("hosts_rows");
    let app = launch(&h, &sshd, json!([{"name": "box", "ssh": "box"}])).await;

    // The host has no paseo-headless: the row says why and offers the install.
    let box_row = row("box");
    wait_state(&app, "box", "error", TIMEOUT).await;
    app.wait_for_text(&format!("{box_row} {}", tid("host-state")), |t| {
        t == "can't connect"
    })
    .await;
    app.wait_for_text(&format!("{box_row} {}", tid("host-why")), |t| {
        t.contains("not installed")
    })
    .await;
    let install = format!("{box_row} {}", tid("host-install"));
    assert!(app.is_shown(&install).await, "Install on host… is offered");
    app.screenshot("host-cannot-connect").await;

    // Cancel changes nothing; Install copies it over ssh, then the host connects.
    app.click(&install).await;
    h.answer_dialog("Install Paseo on box?", Answer::Cancel)
        .await;
    let installed = sshd.user.home.join(".local/bin/paseo-headless");
    assert!(
        !installed.exists(),
        "nothing is copied without the user's yes"
    );
    app.click(&install).await;
    h.answer_dialog("Install Paseo on box?", Answer::Ok).await;
    wait_state(&app, "box", "connected", SLOW).await;
    adopt_backend(&mut sshd);
    assert!(
        installed.exists(),
        "installed in the host user's ~/.local/bin"
    );
    app.wait_for_text(&format!("{box_row} {}", tid("host-state")), |t| {
        t == "connected"
    })
    .await;
    assert!(
        !app.is_shown(&install).await,
        "no install offer once connected"
    );

    // "Add a host…": a bad destination is refused at its field, and nothing is added.
    app.click(&tid("add-host")).await;
    app.wait_for(&tid("host-dialog")).await;
    app.type_into(&tid("host-name"), "far").await;
    app.type_into(&tid("host-ssh"), "-oProxyCommand=x").await;
    app.click(&tid("host-save")).await;
    let said = app
        .wait_for_text(&tid("host-error"), |t| !t.is_empty())
        .await;
    assert!(said.starts_with("SSH destination:"), "{said}");
    assert_eq!(
        app.prop(&tid("host-ssh"), "ariaInvalid").await,
        json!("true"),
        "the field at fault is marked"
    );
    assert_eq!(configured_hosts(&h), ["box"], "nothing added");
    app.screenshot("host-dialog-refused").await;
    // An empty name is named too.
    app.execute(
        "document.querySelector('[data-testid=\"host-name\"]').value = ''",
        vec![],
    )
    .await;
    app.click(&tid("host-save")).await;
    app.wait_for_text(&tid("host-error"), |t| t.starts_with("Name:"))
        .await;

    // A good one is added to config.json, tried, and its row says what ssh said.
    app.type_into(&tid("host-name"), "far").await;
    app.execute(
        "document.querySelector('[data-testid=\"host-ssh\"]').value = ''",
        vec![],
    )
    .await;
    app.type_into(&tid("host-ssh"), "nokey").await;
    app.click(&tid("host-save")).await;
    poll("the dialog to close", TIMEOUT, || async {
        (app.count(&tid("host-dialog")).await == 0).then_some(())
    })
    .await;
    assert_eq!(configured_hosts(&h), ["box", "far"]);
    wait_state(&app, "far", "error", TIMEOUT).await;
    app.wait_for_text(&format!("{} {}", row("far"), tid("host-why")), |t| {
        t.contains("ssh-copy-id")
    })
    .await;

    // Remove host: asked first; Cancel keeps it, Remove takes it out of config.json.
    let remove = format!("{} {}", row("far"), tid("host-remove"));
    app.click(&remove).await;
    h.answer_dialog("Remove the host far?", Answer::Cancel)
        .await;
    assert_eq!(configured_hosts(&h), ["box", "far"]);
    app.click(&remove).await;
    h.answer_dialog("Remove the host far?", Answer::Ok).await;
    app.wait_count(&row("far"), 0).await;
    assert_eq!(configured_hosts(&h), ["box"]);

    // The new-agent form's Host field: the agent is made on the host, as its user, there.
    app.click(&tid("new-agent")).await;
    app.wait_for(&tid("new-agent-host")).await;
    app.click(&format!("{} option[value=\"box\"]", tid("new-agent-host")))
        .await;
    app.click(&format!(
        "{} option[value=\"__directory__\"]",
        tid("new-agent-workspace")
    ))
    .await;
    assert!(
        !app.is_shown(&tid("new-agent-browse")).await,
        "this machine's folder picker is no use for a host's path"
    );
    let there = sshd.user.home.display().to_string();
    app.type_into(&tid("new-agent-directory"), &there).await;
    app.type_into(&tid("new-agent-title"), "remote").await;
    app.type_into(&tid("new-agent-prompt"), "echo hello-from-$(whoami)")
        .await;
    app.screenshot("new-agent-on-host").await;
    app.click(&tid("new-agent-submit")).await;
    let id = poll("the host agent's pane", TIMEOUT, || async {
        let id = app.prop(&tid("agent-pane"), "dataset.agentId").await;
        id.as_str().map(str::to_string)
    })
    .await;
    app.wait_for(&sel_pane(&id)).await;
    app.wait_for_text(&tid("agent-host"), |t| t == "on box")
        .await;
    app.wait_for_text(&tid("agent-cwd"), |t| t == there).await;
    // Its record is the host user's, in the host's data root.
    let record = paseo_core::store::Layout::new(sshd.user.home.join(".paseo"))
        .record_path(&there, id.parse().unwrap());
    poll("the agent's record on the host", TIMEOUT, || async {
        record.exists().then_some(())
    })
    .await;
    // Its output and its turn's end come as the host's events; its workspace shows under the
    // host's row (from the host's snapshot), not among this machine's.
    poll("the host agent's output", TIMEOUT, || async {
        let said = app
            .execute(
                "return [...document.querySelectorAll('[data-testid=\"timeline-item\"]')]\
                   .filter((el) => el.textContent.includes('hello-from-paseo-h-uirows')).length",
                vec![],
            )
            .await;
        (said == json!(1)).then_some(())
    })
    .await;
    app.wait_for_attr(&sel_pane(&id), "data-status", "idle")
        .await;
    app.wait_for(&format!("{box_row} {}", tid("workspace-row")))
        .await;
    assert_eq!(
        app.count(&format!(
            ".sidebar-scroll > .projects {}",
            tid("workspace-row")
        ))
        .await,
        0
    );
    let here = paseo_core::store::Layout::new(h.home()).record_path(&there, id.parse().unwrap());
    assert!(!here.exists(), "nothing of it on this machine");
    adopt_backend(&mut sshd);
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.screenshot("host-connected").await;

    // The host unreachable (its sshd stopped) and the app's ssh killed: disconnected, with
    // when it was last seen; back by itself once it can log in again.
    let sshd_pid = sshd.pid() as i32;
    // SAFETY: signals to processes this test started (sshd) or its app started (ssh).
    unsafe { libc::kill(sshd_pid, libc::SIGSTOP) };
    let ssh = ssh_child(app.pid()).expect("the app's ssh to the host");
    unsafe { libc::kill(ssh as i32, libc::SIGKILL) };
    wait_state(&app, "box", "disconnected", TIMEOUT).await;
    app.wait_for_text(&format!("{box_row} {}", tid("host-state")), |t| {
        t.starts_with("disconnected (last seen ")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    app.screenshot("host-disconnected").await;
    unsafe { libc::kill(sshd_pid, libc::SIGCONT) };
    wait_state(&app, "box", "connected", SLOW).await;
}
