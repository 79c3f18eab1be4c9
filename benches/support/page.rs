//! When a launch's steps happened, epoch milliseconds: the app process's start and the page's
//! performance marks (`ui/boot.js`). For the benches that drive the window (`mod common`).

use crate::common::App;
use serde_json::json;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Now, epoch milliseconds.
pub fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// The app process's start, epoch milliseconds (a clock tick's resolution: 10 ms).
pub fn started_ms(app: &App) -> f64 {
    let age = crate::support::age_seconds(app.pid()).expect("the app's start time");
    now_ms() - age * 1000.0
}

/// When the page marked `mark` (`navigation`: the page's own start), or `None` while it has
/// not.
pub async fn marked_ms(app: &App, mark: &str) -> Option<f64> {
    app.execute(
        "if (arguments[0] === 'navigation') return performance.timeOrigin;
         const m = performance.getEntriesByName(arguments[0])[0];
         return m ? performance.timeOrigin + m.startTime : null;",
        vec![json!(mark)],
    )
    .await
    .as_f64()
}

/// [`marked_ms`], waiting up to `bound` for the page to set the mark.
pub async fn mark_ms(app: &App, mark: &str, bound: Duration) -> f64 {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(at) = marked_ms(app, mark).await {
            return at;
        }
        assert!(Instant::now() < deadline, "the page never marked {mark}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
