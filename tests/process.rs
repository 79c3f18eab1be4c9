//! The app as a process: --headless start and stop, the data-root lock, single instance, the
//! tray menu, closing the window with and without a tray host, the harness leaving nothing
//! behind, and `paseo-headless` (the headless mode without the window stack).

mod common;

use common::{mcp_call, window_stack, Harness, APP, HEADLESS, TIMEOUT};

#[tokio::test]
async fn headless_runs_without_a_display_and_stops_cleanly_on_sigterm_and_sigint() {
    let h = Harness::builder("headless_start_stop")
        .display(false)
        .build();
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT")] {
        let mut app = h.spawn_app(&["--headless"]);
        h.wait_for_lock_holder(app.pid()).await;
        h.wait_for_log("running headless").await;
        assert!(!h.lock_is_free(), "the lock is not held");
        assert!(app.exited().is_none(), "headless exited by itself");

        app.signal(signal);
        let status = app.wait_exit(TIMEOUT).await;
        assert_eq!(status.code(), Some(0), "{name}: {status}; {}", app.stderr());
        assert!(h.lock_is_free(), "{name}: lock still held after exit");
        assert_eq!(h.lock_holder(), None, "{name}: stale pid in the lock file");
        let log = h.log_text();
        assert!(
            log.contains(&format!("stop signal signal=\"{name}\"")),
            "{log}"
        );
    }
    assert!(h.log_text().contains("data root released"));
}

#[tokio::test]
async fn rust_log_sets_the_log_level_and_a_bad_value_is_reported() {
    let cases = [
        ("warn", false, false),
        ("paseo_desktop=debug", true, false),
        ("paseo_desktop=loud", true, true),
    ];
    for (value, expect_info, expect_warning) in cases {
        let h = Harness::builder("rust_log")
            .display(false)
            .env("RUST_LOG", value)
            .build();
        let mut app = h.spawn_app(&["--headless"]);
        h.wait_for_lock_holder(app.pid()).await;
        app.signal(libc::SIGTERM);
        assert_eq!(app.wait_exit(TIMEOUT).await.code(), Some(0));
        let log = h.log_text();
        assert_eq!(log.contains("INFO"), expect_info, "RUST_LOG={value}: {log}");
        assert_eq!(
            app.stderr()
                .contains(&format!("RUST_LOG='{value}' is not a valid filter")),
            expect_warning,
            "RUST_LOG={value}: {}",
            app.stderr()
        );
    }
}

#[tokio::test]
async fn a_second_process_on_the_same_data_root_is_refused_until_the_first_exits() {
    let h = Harness::new("data_root_lock");
    let mut first = h.spawn_app(&["--headless"]);
    h.wait_for_lock_holder(first.pid()).await;
    let root = h.home().canonicalize().unwrap().display().to_string();

    // Another headless process and a window-mode launch (no session bus, so single instance
    // cannot hand over) are both refused, naming the root and the holder.
    for args in [&["--headless"][..], &[][..]] {
        let mut second = h.spawn_app(args);
        let status = second.wait_exit(TIMEOUT).await;
        let stderr = second.stderr();
        assert_eq!(status.code(), Some(1), "{args:?}: {status}; {stderr}");
        assert!(
            stderr.contains(&format!(
                "the data root {root} is in use by another Paseo process (pid {})",
                first.pid()
            )),
            "{args:?}: {stderr}"
        );
        assert_eq!(h.lock_holder(), Some(first.pid()));
    }
    // The refused window launch opened no window.
    assert!(h.windows("Paseo", false).await.is_empty());

    first.signal(libc::SIGTERM);
    assert_eq!(first.wait_exit(TIMEOUT).await.code(), Some(0));

    // Released: the next process gets the root.
    let mut third = h.spawn_app(&["--headless"]);
    h.wait_for_lock_holder(third.pid()).await;
    third.signal(libc::SIGINT);
    assert_eq!(third.wait_exit(TIMEOUT).await.code(), Some(0));
}

#[tokio::test]
async fn bad_arguments_and_a_bad_data_root_are_refused_with_a_clear_message() {
    let h = Harness::builder("bad_input").display(false).build();
    let mut app = h.spawn_app(&["--headles"]);
    assert_eq!(app.wait_exit(TIMEOUT).await.code(), Some(2));
    assert!(app.stderr().contains("unknown argument '--headles'"));

    let file = h.home().join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let mut command = h.command(APP);
    command.arg("--headless").env("PASEO_HOME", &file);
    let mut app = h.spawn("paseo-desktop", command);
    assert_eq!(app.wait_exit(TIMEOUT).await.code(), Some(1));
    assert!(
        app.stderr().contains(&format!(
            "the data root {} exists but is not a folder",
            file.display()
        )),
        "{}",
        app.stderr()
    );
}

#[tokio::test]
async fn a_second_launch_focuses_the_first_window_and_exits() {
    let h = Harness::builder("single_instance").dbus(true).build();
    let first = h.spawn_window_app().await;

    // Hide it from the tray, as a user would, so the hand-over has something to show.
    let tray = h.tray_menu(first.pid()).await;
    tray.click("Hide window").await;
    h.wait_window_visible("Paseo", false).await;
    tray.wait_for_label("Show window").await;

    let mut second = h.spawn_app(&[]);
    let status = second.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{status}; {}", second.stderr());
    h.wait_window_visible("Paseo", true).await;
    tray.wait_for_label("Hide window").await;
    assert_eq!(h.windows("Paseo", true).await.len(), 1, "one window only");
    assert_eq!(h.lock_holder(), Some(first.pid()));
    h.wait_for_log("another launch on this data root: focusing the window")
        .await;

    // SIGTERM stops the window app cleanly too.
    let mut first = first;
    first.signal(libc::SIGTERM);
    assert_eq!(first.wait_exit(TIMEOUT).await.code(), Some(0));
    assert!(h.lock_is_free());
}

#[tokio::test]
async fn a_stop_signal_as_soon_as_the_window_app_owns_its_root_is_a_clean_stop() {
    // The window app takes its data root before Tauri starts (its records read meanwhile): a
    // SIGTERM from then on must quit it in order, not kill it.
    let h = Harness::builder("early_signal").build();
    let mut app = h.spawn_app(&[]);
    h.wait_for_lock_holder(app.pid()).await;
    app.signal(libc::SIGTERM);
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{status}; {}", app.stderr());
    assert!(h.lock_is_free());
}

#[tokio::test]
async fn the_tray_menu_shows_counts_toggles_the_window_and_quits() {
    let h = Harness::builder("tray_menu").dbus(true).build();
    let mut app = h.spawn_window_app().await;
    let tray = h.tray_menu(app.pid()).await;
    assert_eq!(
        tray.labels().await,
        [
            "0 running · 0 need you · 0 total",
            "Hide window",
            "Quit Paseo"
        ]
    );
    tray.click("Hide window").await;
    h.wait_window_visible("Paseo", false).await;
    tray.click("Show window").await;
    h.wait_window_visible("Paseo", true).await;

    tray.click("Quit Paseo").await;
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{}", app.stderr());
    assert!(h.lock_is_free());
    assert!(h.log_text().contains("data root released"));
}

#[tokio::test]
async fn closing_the_window_hides_it_when_a_tray_host_exists_else_quits() {
    let h = Harness::builder("close_window").dbus(true).build();

    // With a tray host on the bus the icon is visible somewhere: close hides to the tray.
    let host = h.start_tray_host();
    let mut app = h.spawn_window_app().await;
    let item = host.wait_for_item().await;
    assert!(item.contains("/org/ayatana/NotificationItem/"), "{item}");
    h.close_window("Paseo").await;
    h.wait_window_visible("Paseo", false).await;
    assert!(
        app.exited().is_none(),
        "closing with a tray host quit the app"
    );
    let tray = h.tray_menu(app.pid()).await;
    tray.wait_for_label("Show window").await;
    tray.click("Show window").await;
    h.wait_window_visible("Paseo", true).await;

    // Without one, hiding would strand the user: close quits, cleanly.
    drop(host);
    h.close_window("Paseo").await;
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{}", app.stderr());
    assert!(h.lock_is_free());
    assert!(h
        .log_text()
        .contains("main window closed with no tray host: quitting"));
}

#[tokio::test]
async fn the_harness_leaves_no_process_behind() {
    let h = Harness::builder("no_leftovers").dbus(true).build();
    let app = h.launch(&[]).await;
    let pid = app.pid();
    h.wait_for_lock_holder(pid).await;
    // A second, directly started process: it sleeps in the background, outside WebDriver.
    let mut command = h.command("sleep");
    command.arg("600");
    let sleeper = h.spawn("sleep", command);
    let expected = [
        "Xvfb",
        "dbus-daemon",
        "tauri-driver",
        "WebKitWebDriver",
        "paseo-desktop",
        "WebKitWebProcess",
        "WebKitNetworkProcess",
        "sleep 600",
    ];
    // Wait until every kind is up (a child shows its environment only once it has exec'd), so
    // the check below cannot pass vacuously.
    common::poll("every kind of process to run", TIMEOUT, || {
        let running = h.processes();
        let all = expected
            .iter()
            .all(|kind| running.iter().any(|(_, cmd)| cmd.contains(kind)));
        async move { all.then_some(()) }
    })
    .await;
    drop(app);
    drop(sleeper);
    let left = h.shutdown();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

/// The environment WebKit's web process got from the app (it inherits the app's settings).
fn web_process_env(h: &Harness, name: &str) -> Option<String> {
    let (pid, _) = h
        .processes()
        .into_iter()
        .find(|(_, cmd)| cmd.contains("WebKitWebProcess"))?;
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ
        .split(|byte| *byte == 0)
        .filter_map(|var| std::str::from_utf8(var).ok())
        .find_map(|var| var.strip_prefix(&format!("{name}=")).map(str::to_string))
}

#[tokio::test]
async fn the_dmabuf_renderer_is_off_unless_the_user_chose() {
    for (user, expected) in [(None, "1"), (Some("0"), "0")] {
        let mut builder = Harness::builder("dmabuf");
        if let Some(value) = user {
            builder = builder.env("WEBKIT_DISABLE_DMABUF_RENDERER", value);
        }
        let h = builder.build();
        let _app = h.spawn_window_app().await;
        let value = common::poll("WebKit's web process", TIMEOUT, || {
            let value = web_process_env(&h, "WEBKIT_DISABLE_DMABUF_RENDERER");
            async move { value }
        })
        .await;
        assert_eq!(value, expected, "user setting {user:?}");
    }
}

#[tokio::test]
async fn headless_serves_mcp_with_the_user_token_and_keeps_state_across_restarts() {
    let h = Harness::builder("headless_mcp").display(false).build();
    let mut app = h.spawn_app(&["--headless"]);
    h.wait_for_log("running headless").await;
    let id = h.mcp_create_shell("headless agent", "echo from-headless");
    let waited = mcp_call(
        h.home(),
        "wait_for_agent",
        serde_json::json!({"agentId": id, "timeoutSeconds": 30}),
    );
    assert_eq!(waited["status"], "idle", "{waited}");
    assert!(waited["lastMessage"]
        .as_str()
        .unwrap()
        .contains("from-headless"));
    let token = std::fs::read_to_string(h.home().join("mcp-token")).unwrap();
    app.signal(libc::SIGTERM);
    assert_eq!(app.wait_exit(TIMEOUT).await.code(), Some(0));

    let mut app = h.spawn_app(&["--headless"]);
    h.wait_for_log_count("running headless", 2).await;
    assert_eq!(
        std::fs::read_to_string(h.home().join("mcp-token")).unwrap(),
        token,
        "the user token is kept"
    );
    let got = mcp_call(h.home(), "get_agent", serde_json::json!({"agentId": id}));
    assert_eq!(got["title"], "headless agent");
    assert_eq!(got["status"], "closed", "{got}");
    assert!(got["lastMessage"]
        .as_str()
        .unwrap()
        .contains("from-headless"));
    app.signal(libc::SIGTERM);
    assert_eq!(app.wait_exit(TIMEOUT).await.code(), Some(0));
}

fn needed_libraries(binary: &str) -> String {
    let out = std::process::Command::new("readelf")
        .args(["--dynamic", "--wide", binary])
        .output()
        .expect("readelf (binutils)");
    assert!(out.status.success(), "readelf {binary} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| line.contains("(NEEDED)"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn paseo_headless_runs_the_headless_mode_without_the_window_stack() {
    // Neither linked nor loaded (the check finds them in paseo-desktop, so it can fail).
    assert!(
        !window_stack(&needed_libraries(APP)).is_empty(),
        "paseo-desktop links no window stack?"
    );
    let linked = window_stack(&needed_libraries(HEADLESS));
    assert!(linked.is_empty(), "paseo-headless links {linked:?}");

    // The same options, under its own name.
    let h = Harness::builder("paseo_headless").display(false).build();
    let run = |args: &[&str]| {
        let mut command = h.command(HEADLESS);
        command.args(args);
        h.spawn("paseo-headless", command)
    };
    let mut version = run(&["--version"]);
    assert_eq!(version.wait_exit(TIMEOUT).await.code(), Some(0));
    assert_eq!(
        version.stdout().trim(),
        format!("paseo-headless {}", env!("CARGO_PKG_VERSION"))
    );
    let mut help = run(&["--help"]);
    assert_eq!(help.wait_exit(TIMEOUT).await.code(), Some(0));
    assert!(
        help.stdout().starts_with("Usage: paseo-headless"),
        "{}",
        help.stdout()
    );
    let mut bad = run(&["--headles"]);
    assert_eq!(bad.wait_exit(TIMEOUT).await.code(), Some(2));
    assert!(
        bad.stderr()
            .contains("paseo-headless: unknown argument '--headles'"),
        "{}",
        bad.stderr()
    );

    // It runs the backend: the lock, MCP with the user token, an agent's turn.
    let mut app = run(&[]);
    h.wait_for_lock_holder(app.pid()).await;
    h.wait_for_log("running headless").await;
    let id = h.mcp_create_shell("lean agent", "echo from-paseo-headless");
    let waited = mcp_call(
        h.home(),
        "wait_for_agent",
        serde_json::json!({"agentId": id, "timeoutSeconds": 30}),
    );
    assert_eq!(waited["status"], "idle", "{waited}");
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", app.pid())).unwrap();
    let loaded = window_stack(&maps);
    assert!(loaded.is_empty(), "paseo-headless loaded {loaded:?}");

    // One lock for both binaries, both ways.
    let root = h.home().canonicalize().unwrap().display().to_string();
    let held_by =
        |pid: u32| format!("the data root {root} is in use by another Paseo process (pid {pid})");
    let mut desktop = h.spawn_app(&["--headless"]);
    assert_eq!(desktop.wait_exit(TIMEOUT).await.code(), Some(1));
    assert!(
        desktop.stderr().contains(&held_by(app.pid())),
        "{}",
        desktop.stderr()
    );
    app.signal(libc::SIGTERM);
    assert_eq!(
        app.wait_exit(TIMEOUT).await.code(),
        Some(0),
        "{}",
        app.stderr()
    );
    assert!(h.lock_is_free(), "lock still held after exit");

    let mut desktop = h.spawn_app(&["--headless"]);
    h.wait_for_lock_holder(desktop.pid()).await;
    let mut refused = run(&[]);
    assert_eq!(refused.wait_exit(TIMEOUT).await.code(), Some(1));
    assert!(
        refused
            .stderr()
            .contains(&format!("paseo-headless: {}", held_by(desktop.pid()))),
        "{}",
        refused.stderr()
    );
    // The agent paseo-headless ran is in the fleet paseo-desktop loaded.
    h.wait_for_log_count("running headless", 2).await;
    let got = mcp_call(h.home(), "get_agent", serde_json::json!({"agentId": id}));
    assert_eq!(got["title"], "lean agent", "{got}");
    desktop.signal(libc::SIGINT);
    assert_eq!(desktop.wait_exit(TIMEOUT).await.code(), Some(0));

    // The same log lines, under the same targets, from either binary.
    let log = h.log_text();
    for line in [
        "paseo_desktop::backend: backend started",
        "paseo_desktop::headless: running headless",
        "paseo_desktop::headless: stop signal signal=\"SIGTERM\"",
        "paseo_desktop::headless: stop signal signal=\"SIGINT\"",
    ] {
        assert!(log.contains(line), "no {line:?} in the log:\n{log}");
    }
}

/// The runs of schedule `name` (archived ones too), as `list_agents` finds them by label.
fn schedule_runs(h: &Harness, name: &str) -> Vec<serde_json::Value> {
    let l = mcp_call(
        h.home(),
        "list_agents",
        serde_json::json!({"labels": {"schedule": name}, "includeArchived": true}),
    );
    l["agents"].as_array().cloned().unwrap_or_default()
}

/// SPEC 20: a real `paseo-headless` with `at` schedules a second apart, SIGKILLed between their
/// due times and again after them, and started again each time: exactly one run per due time,
/// each an ordinary root agent that ran its prompt once.
#[tokio::test]
async fn schedules_fire_once_per_due_time_through_sigkills() {
    let h = Harness::builder("schedules_sigkill").display(false).build();
    let work = h.home().with_extension("work");
    std::fs::create_dir_all(&work).unwrap();
    let start = chrono::Utc::now();
    let names = ["s0", "s1", "s2", "s3"];
    let schedules: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let at = start + chrono::Duration::milliseconds(3_000 + 1_000 * i as i64);
            serde_json::json!({
                "name": name, "at": at.to_rfc3339(), "provider": "shell",
                "prompt": format!("echo {name} >> runs.log"),
                "workspace": {"kind": "directory", "path": work},
            })
        })
        .collect();
    std::fs::write(
        h.home().join("config.json"),
        serde_json::json!({"schedules": schedules}).to_string(),
    )
    .unwrap();
    let headless = |h: &Harness| h.spawn("paseo-headless", h.command(HEADLESS));

    // Killed between the due times: after s0 and s1, before s2 and s3.
    let mut app = headless(&h);
    h.wait_for_log("running headless").await;
    let ledger = h.home().join("schedules.json");
    let until = |ms: i64| start + chrono::Duration::milliseconds(ms);
    while chrono::Utc::now() < until(4_500) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(ledger.exists(), "the schedules were never seen");
    app.signal(libc::SIGKILL);
    app.wait_exit(TIMEOUT).await;

    // Started again past every due time, then killed and started once more.
    for round in 2..=3 {
        let mut app = headless(&h);
        h.wait_for_log_count("running headless", round).await;
        while chrono::Utc::now() < until(7_500) {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let deadline = std::time::Instant::now() + TIMEOUT;
        while names.iter().any(|n| schedule_runs(&h, n).is_empty()) {
            assert!(std::time::Instant::now() < deadline, "a due time never ran");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        for name in names {
            let runs = schedule_runs(&h, name);
            assert_eq!(runs.len(), 1, "round {round}: {name}: {runs:?}");
            assert!(runs[0].get("parentAgentId").is_none());
            let id = runs[0]["id"].as_str().unwrap();
            mcp_call(
                h.home(),
                "wait_for_agent",
                serde_json::json!({"agentId": id, "timeoutSeconds": 20}),
            );
        }
        app.signal(libc::SIGKILL);
        app.wait_exit(TIMEOUT).await;
    }
    let log = std::fs::read_to_string(work.join("runs.log")).unwrap();
    for name in names {
        let n = log.lines().filter(|l| *l == name).count();
        assert!(n <= 1, "{name} ran {n} times: {log:?}");
    }
    // The late ones (due while nothing ran) ran too, once.
    for name in ["s2", "s3"] {
        assert_eq!(log.lines().filter(|l| *l == name).count(), 1, "{log:?}");
    }
}
