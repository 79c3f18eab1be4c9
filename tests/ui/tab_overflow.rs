//! Many tabs and the keyboard: when the agent tabs overflow, arrows and a menu of every tab,
//! with ⌂, + and the active tab always in view (at 1,200 and 900 px, light and dark); Ctrl+1…9
//! by the visible order (⌂ first, Ctrl+9 the last); the ☰ menu lists every shortcut; Ctrl+N
//! puts the focus in the form's first field.

use crate::common::{poll, tid, App, Harness, TIMEOUT};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::{json, Value};

/// Whether the element is wholly inside the tab strip's visible box (not scrolled or cut off).
async fn in_view(app: &App, selector: &str) -> bool {
    let got = app
        .execute(
            r#"const el = document.querySelector(arguments[0]);
               const strip = document.querySelector('[data-testid="tab-strip"]');
               if (!el || el.hidden) return false;
               const r = el.getBoundingClientRect(), s = strip.getBoundingClientRect();
               return r.width > 0 && r.left >= s.left - 0.5 && r.right <= s.right + 0.5;"#,
            vec![json!(selector)],
        )
        .await;
    got == json!(true)
}

/// `n` idle shell agents in one workspace, each opened as a tab (the way a track or a
/// notification opens one); returns their ids in tab order.
async fn many_tabs(app: &App, dir: &std::path::Path, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let a = app
            .create_shell(dir, &format!("agent number {i:02}"), "true")
            .await;
        ids.push(id(&a));
    }
    let first = app.agent(&ids[0]).await.unwrap();
    app.click(&sel_ws(ws_id(&first))).await;
    for id in &ids {
        app.call_ui("/gestures/tabs.js", "openAgent", vec![json!(id)])
            .await;
        app.wait_for(&sel_pane(id)).await;
    }
    ids
}

async fn overflow_in(theme: Option<&str>, test: &str) {
    let mut b = Harness::builder(test);
    if let Some(t) = theme {
        b = b.env("GTK_THEME", t);
    }
    let h = b.build();
    let dir = h.work_dir("app");
    let app = h.launch_ready(&[]).await;
    let ids = many_tabs(&app, &dir, 14).await;
    let tag = theme.map_or("light", |_| "dark");
    for width in [1200, 900] {
        resize_window(&h, &app, width).await;
        // The strip overflows: the arrows and the menu show; ⌂, + and the active tab are in view.
        app.wait_for(&format!("{}:not([hidden])", tid("tabs-overflow")))
            .await;
        for pinned in [tid("tab-home"), tid("new-agent"), tid("tabs-overflow")] {
            assert!(
                in_view(&app, &pinned).await,
                "{pinned} out of view at {width}px"
            );
        }
        // The first tab, then the last, activated: each is scrolled into view.
        for id in [&ids[0], &ids[ids.len() - 1], &ids[5]] {
            app.call_ui("/gestures/tabs.js", "activateTab", vec![json!(id)])
                .await;
            app.wait_for_attr(&sel_tab(id), "aria-selected", "true")
                .await;
            poll("the active tab in view", TIMEOUT, || async {
                in_view(&app, &sel_tab(id)).await.then_some(())
            })
            .await;
            assert!(in_view(&app, &tid("tab-home")).await);
            assert!(in_view(&app, &tid("new-agent")).await);
        }
        // The arrows scroll the tabs.
        let left = || app.execute("return document.querySelector('.tabs').scrollLeft", vec![]);
        let before = left().await.as_f64().unwrap();
        app.click(&tid("tabs-scroll-right")).await;
        poll("the tabs to scroll right", TIMEOUT, || async {
            (left().await.as_f64().unwrap() > before).then_some(())
        })
        .await;
        // The menu lists every tab, ⌂ first, in order; choosing one shows it.
        app.click(&tid("tabs-overflow")).await;
        app.wait_for(&tid("tabs-overflow-menu")).await;
        let listed: Vec<Value> = app
            .execute(
                r#"return [...document.querySelectorAll('[data-testid="tabs-overflow-item"]')]
                     .map((b) => b.dataset.agentId ?? null)"#,
                vec![],
            )
            .await
            .as_array()
            .unwrap()
            .clone();
        let mut want = vec![Value::Null];
        want.extend(ids.iter().map(|i| json!(i)));
        assert_eq!(listed, want);
        app.screenshot(&format!("overflow-menu-{tag}-{width}"))
            .await;
        app.click(&format!(
            "[data-testid=\"tabs-overflow-item\"][data-agent-id=\"{}\"]",
            ids[12]
        ))
        .await;
        app.wait_for(&sel_pane(&ids[12])).await;
        poll("the chosen tab in view", TIMEOUT, || async {
            in_view(&app, &sel_tab(&ids[12])).await.then_some(())
        })
        .await;
        app.screenshot(&format!("overflow-{tag}-{width}")).await;
    }
    // Tabs closed (archived, as a root agent's ×) until the rest fit: the arrows and the menu
    // go again.
    for id in &ids[1..] {
        app.call_ui("/gestures/tabs.js", "closeTab", vec![json!(id)])
            .await;
    }
    app.wait_count(&tid("tab"), 1).await;
    app.wait_for(&format!("{}[hidden]", tid("tabs-overflow")))
        .await;
    assert!(in_view(&app, &sel_tab(&ids[0])).await);
    app.quit().await;
}

#[tokio::test]
async fn overflowing_tabs_scroll_list_every_tab_and_keep_home_plus_and_the_active_tab_in_view() {
    overflow_in(None, "tabs_overflow_light").await;
}

#[tokio::test]
async fn overflowing_tabs_in_the_dark_theme() {
    overflow_in(Some("Adwaita:dark"), "tabs_overflow_dark").await;
}

/// Ctrl+1 is ⌂ (the first tab shown), Ctrl+2 the first agent tab, Ctrl+9 the last tab; the ☰
/// menu lists each shortcut the window has; Ctrl+N puts the focus where typing fills the form.
#[tokio::test]
async fn ctrl_digits_follow_the_visible_tabs_the_menu_lists_every_shortcut_and_ctrl_n_focuses_the_form(
) {
    let (_h, app, dir) = start("tabs_keyboard").await;
    let ids = many_tabs(&app, &dir, 4).await;
    let ctrl = |key: &str| format!("{}{key}{}", Key::Control, Key::Null);
    app.type_into("body", &ctrl("1")).await;
    app.wait_for_attr(&tid("tab-home"), "aria-selected", "true")
        .await;
    app.wait_for(&tid("workspace-home")).await;
    app.type_into("body", &ctrl("2")).await;
    app.wait_for(&sel_pane(&ids[0])).await;
    app.type_into("body", &ctrl("4")).await;
    app.wait_for(&sel_pane(&ids[2])).await;
    app.type_into("body", &ctrl("9")).await;
    app.wait_for(&sel_pane(&ids[3])).await;

    // The ☰ menu's keyboard list names every shortcut, Ctrl+1…9, Ctrl+. and Ctrl+F included.
    app.click(&tid("app-menu")).await;
    let listed = app
        .wait_for_text(&tid("shortcuts"), |t| !t.is_empty())
        .await;
    for key in [
        "Ctrl+N",
        "Ctrl+Shift+N",
        "Ctrl+W",
        "Ctrl+Tab",
        "Ctrl+PgUp",
        "Ctrl+1",
        "Ctrl+9",
        "Ctrl+L",
        "Ctrl+.",
        "Ctrl+F",
        "Esc",
        "Shift+Enter",
    ] {
        assert!(
            listed.contains(key),
            "{key} missing from the menu:\n{listed}"
        );
    }
    app.screenshot("menu-shortcuts").await;
    app.type_into(&tid("menu-new-agent"), &Key::Escape.to_string())
        .await;

    // Ctrl+N: the form opens with the focus in its first field that takes typing.
    app.type_into("body", &ctrl("n")).await;
    app.wait_for(&tid("new-agent-form")).await;
    poll(
        "the form's first field to have the focus",
        TIMEOUT,
        || async {
            let f = app
                .execute(
                    "return document.activeElement?.dataset.testid ?? null",
                    vec![],
                )
                .await;
            (f == json!("new-agent-title")).then_some(())
        },
    )
    .await;
    let active = app.find(":focus").await;
    active.send_keys("typed at once").await.unwrap();
    assert_eq!(
        app.prop(&tid("new-agent-title"), "value").await,
        json!("typed at once")
    );
    app.quit().await;
}
