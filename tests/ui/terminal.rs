//! Process output as a terminal shows it (a shell agent's real output): colours rendered from
//! the styled runs the backend parsed, no escape bytes; a failing command's message said once;
//! a running turn's live elapsed time. Screenshots light and dark, at 1,200 and 900 px.

use crate::common::{poll, tid, App, Harness};
use crate::helpers::*;
use serde_json::{json, Value};
use std::time::Duration;

/// The colours, text and escape bytes of the agent's output items as the page renders them.
async fn output_spans(app: &App, agent: &str) -> Value {
    app.execute(
        r#"const pane = document.querySelector(`[data-testid="agent-pane"][data-agent-id="${arguments[0]}"]`);
           const items = [...pane.querySelectorAll('[data-testid="timeline-item"][data-kind="output"] pre')];
           const text = items.map((p) => p.textContent).join('');
           const spans = items.flatMap((p) => [...p.querySelectorAll('span')]).map((s) => ({
             text: s.textContent, color: getComputedStyle(s).color, weight: getComputedStyle(s).fontWeight }));
           const bg = getComputedStyle(document.body).backgroundColor;
           return { text, spans, bg };"#,
        vec![json!(agent)],
    )
    .await
}

fn rgb(css: &str) -> [f64; 3] {
    let nums: Vec<f64> = css
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    [nums[0], nums[1], nums[2]]
}

/// WCAG relative luminance contrast between two sRGB colours.
fn contrast(a: [f64; 3], b: [f64; 3]) -> f64 {
    let lum = |c: [f64; 3]| {
        let ch = |v: f64| {
            let v = v / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2])
    };
    let (x, y) = (lum(a), lum(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

async fn colours_in(theme: Option<&str>, test: &str) {
    let mut b = Harness::builder(test);
    if let Some(t) = theme {
        b = b.env("GTK_THEME", t);
    }
    let h = b.build();
    let dir = h.work_dir("app");
    let app = h.launch_ready(&[]).await;
    let agent = app
        .create_shell(
            &dir,
            "colours",
            r"printf '\033[31mred\033[0m plain \033[1;32mbold green\033[0m \033[2J\033[10;4H\033[38;5;208morange\033[0m\n'",
        )
        .await;
    let agent_id = id(&agent);
    app.wait_for_status(&agent_id, "idle").await;
    open_root(&app, &agent).await;
    app.wait_for(&format!(
        "{} [data-testid=\"timeline-item\"][data-kind=\"output\"] span",
        sel_pane(&agent_id)
    ))
    .await;
    let got = output_spans(&app, &agent_id).await;
    let text = got["text"].as_str().unwrap();
    assert_eq!(text, "red plain bold green orange\n", "{got}");
    assert!(!text.contains('\u{1b}') && !text.contains("[31m"), "{got}");
    let span = |t: &str| {
        got["spans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["text"] == t)
            .unwrap_or_else(|| panic!("no span {t:?}: {got}"))
            .clone()
    };
    let bg = rgb(got["bg"].as_str().unwrap());
    let red = rgb(span("red")["color"].as_str().unwrap());
    assert!(
        red[0] > red[1] + 80.0 && red[0] > red[2] + 80.0,
        "red is {red:?}"
    );
    let green = span("bold green");
    let g = rgb(green["color"].as_str().unwrap());
    assert!(g[1] > g[0] + 60.0 && g[1] > g[2] + 40.0, "green is {g:?}");
    assert!(green["weight"].as_str().unwrap().parse::<u32>().unwrap() >= 600);
    let orange = rgb(span("orange")["color"].as_str().unwrap());
    assert_eq!(orange, [255.0, 135.0, 0.0]);
    // The theme's named colours stay readable on its background (WCAG AA for large text).
    for (name, c) in [("red", red), ("green", g)] {
        let ratio = contrast(c, bg);
        assert!(ratio >= 3.0, "{name} {c:?} on {bg:?}: contrast {ratio:.2}");
    }
    let tag = theme.map_or("light", |_| "dark");
    app.screenshot(&format!("colours-{tag}-1200")).await;
    resize_window(&h, &app, 900).await;
    app.screenshot(&format!("colours-{tag}-900")).await;
    app.quit().await;
}

#[tokio::test]
async fn shell_output_shows_terminal_colours_without_escape_bytes() {
    colours_in(None, "terminal_colours_light").await;
}

#[tokio::test]
async fn terminal_colours_stay_readable_in_the_dark_theme() {
    colours_in(Some("Adwaita:dark"), "terminal_colours_dark").await;
}

/// A failing command's message: its stderr shows as output, the error item says how it ended,
/// and no banner says it a third time.
#[tokio::test]
async fn a_failing_commands_message_is_said_once() {
    let (_h, app, dir) = start("terminal_fail_once").await;
    let agent = app
        .create_shell(&dir, "fails", "cat nonexistent-file.txt")
        .await;
    let agent_id = id(&agent);
    app.wait_for_status(&agent_id, "error").await;
    open_root(&app, &agent).await;
    let pane = sel_pane(&agent_id);
    app.wait_for(&format!(
        "{pane} [data-testid=\"timeline-item\"][data-kind=\"error\"]"
    ))
    .await;
    // The record keeps the whole message (for the parent and the tray).
    let detail = app.agent_detail(&agent_id).await;
    assert!(
        detail["lastError"]
            .as_str()
            .unwrap()
            .contains("No such file"),
        "{detail}"
    );
    // Read once the pane shows the turn's end (a resync may reload the timeline meanwhile).
    let seen = app
        .wait_for_text(&pane, |t| t.contains("exited with code 1"))
        .await;
    assert_eq!(
        seen.matches("No such file").count(),
        1,
        "the message shown more than once:\n{seen}"
    );
    assert!(seen.contains("exited with code 1"), "{seen}");
    assert!(!app.is_shown(&tid("agent-error")).await);
    app.screenshot("fail-once").await;
    app.quit().await;
}

/// While a turn runs, the header shows how long it has run, ticking; the last run's
/// "12ms · exit 0" is not shown as if it were this one's.
#[tokio::test]
async fn a_running_turn_shows_its_live_elapsed_time() {
    let (_h, app, dir) = start("terminal_elapsed").await;
    let agent = app.create_shell(&dir, "sleeper", "true").await;
    let agent_id = id(&agent);
    app.wait_for_status(&agent_id, "idle").await;
    open_root(&app, &agent).await;
    let pane = sel_pane(&agent_id);
    app.wait_for_text(&tid("agent-usage"), |t| t.contains("exit 0"))
        .await;
    assert!(!app.is_shown(&tid("agent-elapsed")).await);
    app.call_backend("sendPrompt", vec![json!(agent_id), json!("sleep 300")])
        .await;
    app.wait_for_attr(&pane, "data-status", "running").await;
    let first = app
        .wait_for_text(&tid("agent-elapsed"), |t| t.ends_with('s'))
        .await;
    assert!(!app.is_shown(&tid("agent-usage")).await);
    let secs = |t: &str| t.trim_end_matches('s').parse::<u64>().ok();
    let start = secs(&first).unwrap_or_else(|| panic!("elapsed {first:?}"));
    poll(
        "the elapsed time to tick",
        Duration::from_secs(10),
        || async {
            let now = app.text(&tid("agent-elapsed")).await;
            secs(&now).filter(|s| *s >= start + 2)
        },
    )
    .await;
    app.screenshot("elapsed").await;
    app.click(&tid("composer-interrupt")).await;
    app.wait_for_attr(&pane, "data-status", "idle").await;
    assert!(!app.is_shown(&tid("agent-elapsed")).await);
    app.quit().await;
}
