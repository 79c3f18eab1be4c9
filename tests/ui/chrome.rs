//! The window as an app, not a web page: no browser context menu (Back, Forward, Reload) on a
//! right-click, while a text field keeps its Cut / Copy / Paste menu; the window's size and
//! place survive a relaunch; the ☰ menu's Settings, About and Quit. The menu and the window's
//! geometry are X-level facts WebDriver cannot see: read with xdotool and Xlib.

use crate::common::{poll, tid, Harness, TIMEOUT};
use crate::helpers::*;
use crate::words::resize;
use std::time::Duration;

/// The viewable top-level windows on the display (a popup menu is one of them while it shows).
fn viewable_windows(display: &str) -> Vec<u64> {
    use std::ffi::CString;
    use x11::xlib;
    let name = CString::new(display).unwrap();
    let mut found = Vec::new();
    // SAFETY: plain Xlib queries on a connection opened and closed here; the children list is
    // freed with XFree once read.
    unsafe {
        let dpy = xlib::XOpenDisplay(name.as_ptr());
        assert!(!dpy.is_null(), "cannot open display {display}");
        let root = xlib::XDefaultRootWindow(dpy);
        let (mut r, mut p) = (0, 0);
        let mut children: *mut xlib::Window = std::ptr::null_mut();
        let mut n = 0u32;
        if xlib::XQueryTree(dpy, root, &mut r, &mut p, &mut children, &mut n) != 0 {
            for i in 0..n as usize {
                let w = *children.add(i);
                let mut attrs: xlib::XWindowAttributes = std::mem::zeroed();
                if xlib::XGetWindowAttributes(dpy, w, &mut attrs) != 0
                    && attrs.map_state == xlib::IsViewable
                {
                    found.push(w as u64);
                }
            }
            if !children.is_null() {
                xlib::XFree(children.cast());
            }
        }
        xlib::XCloseDisplay(dpy);
    }
    found
}

async fn xdotool(h: &Harness, args: &[&str]) -> String {
    let out = tokio::process::Command::new("xdotool")
        .env("DISPLAY", h.display())
        .args(args)
        .output()
        .await
        .expect("cannot run xdotool");
    assert!(out.status.success(), "xdotool {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Right-clicks at (x, y) in the main window and answers the windows that appeared for it.
async fn right_click(h: &Harness, x: i32, y: i32) -> Vec<u64> {
    let window = h.wait_for_window("Paseo").await.to_string();
    xdotool(
        h,
        &[
            "mousemove",
            "--window",
            &window,
            &x.to_string(),
            &y.to_string(),
        ],
    )
    .await;
    // A tooltip of what is under the pointer is a window too: let it show before counting.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let before = viewable_windows(h.display());
    xdotool(h, &["click", "3"]).await;
    // A menu shows within a frame or two; give it plenty.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let after = viewable_windows(h.display());
    after.into_iter().filter(|w| !before.contains(w)).collect()
}

/// The centre of an element, in the window's coordinates (the page fills the window).
async fn centre(app: &crate::common::App, selector: &str) -> (i32, i32) {
    let v = app
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect(); \
             return [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)];",
            vec![serde_json::json!(selector)],
        )
        .await;
    (v[0].as_i64().unwrap() as i32, v[1].as_i64().unwrap() as i32)
}

#[tokio::test]
async fn right_click_shows_no_browser_menu_but_a_text_field_keeps_copy_and_paste() {
    let (h, app, dir) = start("no_browser_menu").await;
    let agent = app.create_shell(&dir, "notes", "echo hello").await;
    open_root(&app, &agent).await;
    app.wait_for_attr(&sel_pane(&id(&agent)), "data-status", "idle")
        .await;

    // The sidebar and the timeline: nothing (WebKit's menu would be Back, Forward, Reload).
    let (x, y) = centre(&app, &tid("app-menu")).await;
    let popped = right_click(&h, x, y + 60).await;
    assert!(
        popped.is_empty(),
        "a menu showed over the sidebar: {popped:?}"
    );
    let (x, y) = centre(&app, &sel_pane(&id(&agent))).await;
    let popped = right_click(&h, x, y).await;
    assert!(popped.is_empty(), "a menu showed over the pane: {popped:?}");

    // A text field with text in it: its editing menu (Cut, Copy, Paste…) still shows.
    app.type_into(&tid("composer-input"), "some text").await;
    app.execute(
        "document.querySelector('[data-testid=\"composer-input\"]').select(); return null;",
        vec![],
    )
    .await;
    let (x, y) = centre(&app, &tid("composer-input")).await;
    let popped = right_click(&h, x, y).await;
    h.screenshot_screen("text-field-menu");
    // (A GTK menu is a window or two: the menu and its toplevel.)
    assert!(!popped.is_empty(), "the text field's menu did not show");
    xdotool(&h, &["key", "Escape"]).await;
    poll("the menu to close", TIMEOUT, || async {
        let open = viewable_windows(h.display());
        (!popped.iter().any(|w| open.contains(w))).then_some(())
    })
    .await;
    app.quit().await;
}

#[tokio::test]
async fn the_window_comes_back_at_its_size_and_place() {
    let h = Harness::new("window_geometry");
    let app = h.launch_ready(&[]).await;
    let window = h.wait_for_window("Paseo").await.to_string();
    resize(&h, &app, 900, 700).await;
    xdotool(&h, &["windowmove", "--sync", &window, "30", "20"]).await;
    poll("the geometry in windows.json", TIMEOUT, || async {
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(h.home().join("windows.json")).ok()?).ok()?;
        let g = &saved["geometry"]["main"];
        (g["width"] == 900 && g["height"] == 700 && g["x"] == 30 && g["y"] == 20).then_some(())
    })
    .await;
    app.quit().await;
    poll("the app to release the data root", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;

    let app = h.launch_ready(&[]).await;
    let window = h.wait_for_window("Paseo").await.to_string();
    let geometry = poll("the window at its old size and place", TIMEOUT, || async {
        let text = xdotool(&h, &["getwindowgeometry", &window]).await;
        (text.contains("Position: 30,20") && text.contains("Geometry: 900x700")).then_some(text)
    })
    .await;
    assert!(geometry.contains("900x700"), "{geometry}");
    let inner = app
        .execute("return [innerWidth, innerHeight]", vec![])
        .await;
    assert_eq!(inner, serde_json::json!([900, 700]));
    app.quit().await;
    poll("the app to release the data root", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;

    // A place on a screen unplugged since (beyond this display's right edge): the size comes
    // back, the place does not, so the window is where the user can reach it.
    let path = h.home().join("windows.json");
    let mut saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    saved["geometry"]["main"]["x"] = serde_json::json!(9000);
    std::fs::write(&path, serde_json::to_vec(&saved).unwrap()).unwrap();
    let app = h.launch_ready(&[]).await;
    let window = h.wait_for_window("Paseo").await.to_string();
    let text = poll("the window at its old size", TIMEOUT, || async {
        let text = xdotool(&h, &["getwindowgeometry", &window]).await;
        text.contains("Geometry: 900x700").then_some(text)
    })
    .await;
    let x: i32 = text
        .split("Position: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|x| x.trim().parse().ok())
        .unwrap_or_else(|| panic!("no position in {text}"));
    let screen_width = app.execute("return screen.width", vec![]).await;
    assert!(
        x >= 0 && i64::from(x) < screen_width.as_i64().unwrap(),
        "the window is at x {x}, off the {screen_width} px screen: {text}"
    );
    app.quit().await;
}

#[tokio::test]
async fn the_menu_opens_settings_shows_about_and_quits() {
    // The desktop's opener: a script that notes what it was asked to open.
    let tools = tempfile::tempdir().unwrap();
    let opened = tools.path().join("opened");
    let opener = tools.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let h = Harness::builder("menu_entries").env("PATH", &path).build();
    let app = h.launch_ready(&[]).await;

    // Settings: config.json (made as there was none: the starter file, which sets nothing and
    // lists the keys) handed to the opener.
    app.click(&tid("app-menu")).await;
    app.click(&tid("menu-settings")).await;
    let config = h.home().join("config.json");
    let seen = poll("the opener to run", TIMEOUT, || async {
        std::fs::read_to_string(&opened).ok()
    })
    .await;
    assert_eq!(seen.trim(), config.display().to_string());
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        paseo_core::config::STARTER
    );
    // An opener that finds no application: the window says where to edit the file.
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\nexit 3\n",
            opened.display()
        ),
    )
    .unwrap();
    app.click(&tid("app-menu")).await;
    app.click(&tid("menu-settings")).await;
    let notice = app
        .wait_for_text(&tid("notice"), |t| {
            t.contains("edit it with any text editor")
        })
        .await;
    assert!(notice.contains(&config.display().to_string()), "{notice}");

    // About: the version, the data root and the logs.
    app.click(&tid("app-menu")).await;
    app.click(&tid("menu-about")).await;
    app.wait_for(&tid("about")).await;
    assert_eq!(
        app.text(&tid("about-version")).await,
        env!("CARGO_PKG_VERSION")
    );
    let home = std::fs::canonicalize(h.home()).unwrap();
    assert_eq!(
        app.text(&tid("about-data-root")).await,
        home.display().to_string()
    );
    assert_eq!(
        app.text(&tid("about-logs")).await,
        home.join("logs").display().to_string()
    );
    app.screenshot("about-1200").await;
    resize(&h, &app, 900, 700).await;
    app.screenshot("about-900").await;
    app.click(&tid("about-close")).await;
    app.wait_count(&tid("about"), 0).await;

    // Quit: nothing runs, so the app quits at once.
    app.click(&tid("app-menu")).await;
    app.screenshot("menu-900").await;
    // Clicked from the page a moment later: the app may be gone before WebDriver's own click
    // would answer.
    app.wait_for(&tid("menu-quit")).await;
    app.execute(
        "setTimeout(() => document.querySelector('[data-testid=\"menu-quit\"]').click(), 100); return null;",
        vec![],
    )
    .await;
    poll("the app to quit", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;
    assert!(h.log_text().contains("quit from the menu"));
    app.quit().await;
}
