//! The app under WebDriver: started by tauri-driver (→ WebKitWebDriver → the real binary) with a
//! fantoccini session on its webview, and the page helpers every UI test uses: find, read text,
//! wait for text, attributes or counts, click, run scripts, call UI modules, screenshots.
//!
//! Every round trip to the driver is bounded, so a wedged driver fails the test instead of
//! hanging the suite.

use super::dialogs::windows_on;
use super::harness::{capture, Harness, Shared};
use super::proc::{processes_with_marker, Proc};
use super::{poll, screenshot_dir, APP, POLL, TIMEOUT};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The app running under tauri-driver with a WebDriver session. Dropping it kills tauri-driver's
/// process group: WebKitWebDriver, the app and its WebKit processes.
pub struct App {
    client: Client,
    home: PathBuf,
    shared: Arc<Shared>,
    driver: Proc,
}

/// Bounds one WebDriver round trip, so a wedged driver fails the test instead of hanging it.
async fn bounded<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(TIMEOUT, future).await {
        Ok(value) => value,
        Err(_) => panic!("WebDriver did not answer {what} within {TIMEOUT:?}"),
    }
}

/// Whether the first element matching `arguments[0]` is enabled and in the same place and size
/// across 50 ms (a few frames): ready for a click at the centre WebDriver measures.
const READY_TO_CLICK: &str = "const [selector, done] = arguments; \
    const el = document.querySelector(selector); \
    if (!el || el.disabled) { done(false); return; } \
    const a = el.getBoundingClientRect(); \
    setTimeout(() => { const b = el.getBoundingClientRect(); \
      done(el.isConnected && !el.disabled && a.x === b.x && a.y === b.y \
        && a.width === b.width && a.height === b.height); }, 50);";

/// The text of the first element matching `arguments[0]`, or null. Its DOM text: WebKitWebDriver's
/// own element text reads "" for elements that clip their overflow with an ellipsis.
const TEXT_OF: &str =
    "const el = document.querySelector(arguments[0]); return el ? el.textContent : null;";

impl App {
    /// The fantoccini client, for anything the helpers do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The element matching `selector` now (panics if there is none).
    pub async fn find(&self, selector: &str) -> Element {
        bounded("find", self.client.find(Locator::Css(selector)))
            .await
            .unwrap_or_else(|error| panic!("no element {selector}: {error}"))
    }

    /// All elements matching `selector` now.
    pub async fn find_all(&self, selector: &str) -> Vec<Element> {
        bounded("find_all", self.client.find_all(Locator::Css(selector)))
            .await
            .unwrap_or_default()
    }

    /// How many elements match `selector` now.
    pub async fn count(&self, selector: &str) -> usize {
        self.find_all(selector).await.len()
    }

    /// Waits until exactly `n` elements match `selector`.
    pub async fn wait_count(&self, selector: &str, n: usize) {
        poll(&format!("{n} × {selector}"), TIMEOUT, || async {
            (self.count(selector).await == n).then_some(())
        })
        .await
    }

    /// The DOM text of the first element matching `selector`, None if there is none (or the
    /// page did not answer).
    async fn try_text(&self, selector: &str) -> Option<String> {
        let text = bounded("text", self.client.execute(TEXT_OF, vec![json!(selector)])).await;
        text.ok()?.as_str().map(str::to_string)
    }

    /// The text of the element matching `selector` now (panics if there is none).
    pub async fn text(&self, selector: &str) -> String {
        self.try_text(selector)
            .await
            .unwrap_or_else(|| panic!("no element {selector} to read the text of"))
    }

    /// Whether the element matching `selector` is shown (has a layout box and is not hidden).
    pub async fn is_shown(&self, selector: &str) -> bool {
        let script = "const el = document.querySelector(arguments[0]);
            if (!el) return false;
            const box = el.getBoundingClientRect();
            return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';";
        self.execute(script, vec![json!(selector)]).await == json!(true)
    }

    /// The document's title.
    pub async fn title(&self) -> String {
        bounded("title", self.client.title())
            .await
            .unwrap_or_else(|error| panic!("no title: {error}"))
    }

    /// Waits for an element matching `selector`.
    pub async fn wait_for(&self, selector: &str) -> Element {
        poll(&format!("element {selector}"), TIMEOUT, || async {
            bounded("find", self.client.find(Locator::Css(selector)))
                .await
                .ok()
        })
        .await
    }

    /// Waits until the text of `selector` satisfies `check`; returns that text.
    pub async fn wait_for_text(&self, selector: &str, check: impl Fn(&str) -> bool) -> String {
        let mut last = None;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let now = self.try_text(selector).await;
            if let Some(text) = now.as_deref().filter(|text| check(text)) {
                return text.to_string();
            }
            last = now.or(last);
            if Instant::now() >= deadline {
                panic!("timed out waiting for the text of {selector}; last text: {last:?}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until attribute `name` of `selector` equals `value`.
    pub async fn wait_for_attr(&self, selector: &str, name: &str, value: &str) {
        poll(
            &format!("{selector} to have {name}={value:?}"),
            TIMEOUT,
            || async {
                let element = self.client.find(Locator::Css(selector)).await.ok()?;
                let found = element.attr(name).await.ok()??;
                (found == value).then_some(())
            },
        )
        .await
    }

    /// Waits until the UI has booted (`body[data-ready=true]`): its first data is on screen.
    pub async fn wait_ready(&self) {
        self.wait_for_attr("body", "data-ready", "true").await
    }

    /// Waits for `selector` to be there, enabled and still (not moved by a render for a few
    /// frames), and clicks it, as a user waits for a button a previous action disabled or
    /// moved. WebDriver clicks at the element's centre as it measured it: a disabled button
    /// ignores the click, and one a render moves in between (a home tab appearing to its left)
    /// leaves the click to whatever took its place. While WebKitWebDriver finds the element not
    /// interactable yet (laid out late, covered for a frame) it retries, bounded, printing what
    /// was at the element's centre the first time.
    pub async fn click(&self, selector: &str) {
        let deadline = Instant::now() + TIMEOUT;
        let mut reported = false;
        poll(
            &format!("{selector} to be enabled and still"),
            TIMEOUT,
            || async {
                let ready = self
                    .execute_async(READY_TO_CLICK, vec![json!(selector)])
                    .await;
                (ready == json!(true)).then_some(())
            },
        )
        .await;
        loop {
            let element = self.wait_for(selector).await;
            let error = match bounded("click", element.click()).await {
                Ok(()) => return,
                Err(error) => error,
            };
            if !reported {
                reported = true;
                let at = self.execute(CLICK_DIAGNOSIS, vec![json!(selector)]).await;
                eprintln!("click {selector}: {error:?}; {at}");
            }
            assert!(
                Instant::now() < deadline,
                "cannot click {selector}: {error:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A real pointer click at the viewport point (`x`, `y`), WebDriver's actions: the pointer
    /// moves there (a move of zero pixels when it is there already) and presses and releases
    /// the left button, as a user clicking without moving the mouse again.
    pub async fn click_at(&self, x: f64, y: f64) {
        use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
        let mouse = MouseActions::new("mouse".into())
            .then(PointerAction::MoveTo {
                duration: Some(Duration::from_millis(0)),
                x,
                y,
            })
            .then(PointerAction::Down {
                button: MOUSE_BUTTON_LEFT,
            })
            .then(PointerAction::Up {
                button: MOUSE_BUTTON_LEFT,
            });
        bounded("pointer actions", self.client.perform_actions(mouse))
            .await
            .expect("WebDriver pointer actions");
    }

    /// The centre of the first element matching `selector`, in viewport pixels.
    pub async fn centre_of(&self, selector: &str) -> (f64, f64) {
        let at = self
            .execute(
                "const r = document.querySelector(arguments[0]).getBoundingClientRect(); \
                 return [r.x + r.width / 2, r.y + r.height / 2];",
                vec![json!(selector)],
            )
            .await;
        (at[0].as_f64().unwrap(), at[1].as_f64().unwrap())
    }

    /// Waits for `selector` and types `text` into it (WebDriver key events, as a keyboard does;
    /// `fantoccini::key::Key` characters press keys such as Control).
    pub async fn type_into(&self, selector: &str, text: &str) {
        let element = self.wait_for(selector).await;
        bounded("send_keys", element.send_keys(text))
            .await
            .unwrap_or_else(|error| panic!("cannot type into {selector}: {error:?}"));
    }

    /// The DOM property at `path` (dotted, e.g. `disabled` or `dataset.awaiting`) of the element
    /// matching `selector` now; null if there is no such element or property.
    pub async fn prop(&self, selector: &str, path: &str) -> Value {
        let script = "const [selector, path] = arguments;
            const el = document.querySelector(selector);
            return path.split('.').reduce((o, key) => (o == null ? null : o[key]), el) ?? null;";
        self.execute(script, vec![json!(selector), json!(path)])
            .await
    }

    /// Runs `script` in the page (`arguments` holds `args`) and returns its result.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        bounded("execute", self.client.execute(script, args))
            .await
            .unwrap_or_else(|error| panic!("script failed: {error}\n{script}"))
    }

    /// Runs `script` in the page; it finishes by calling the last argument with its result.
    pub async fn execute_async(&self, script: &str, args: Vec<Value>) -> Value {
        bounded("execute_async", self.client.execute_async(script, args))
            .await
            .unwrap_or_else(|error| panic!("async script failed: {error}\n{script}"))
    }

    /// [`App::execute_async`] for a script that works for a while by design (a check over tens
    /// of thousands of cards), bounded by `within` instead of one round trip's [`TIMEOUT`]:
    /// at most WebDriver's own script timeout (60 s).
    pub async fn execute_async_within(
        &self,
        within: std::time::Duration,
        script: &str,
        args: Vec<Value>,
    ) -> Value {
        match tokio::time::timeout(within, self.client.execute_async(script, args)).await {
            Ok(r) => r.unwrap_or_else(|error| panic!("async script failed: {error}\n{script}")),
            Err(_) => panic!("the page did not finish the script within {within:?}"),
        }
    }

    /// Calls a function exported by a UI module, e.g. `call_ui("/backend.js", "appInfo", [])`,
    /// awaiting it if it returns a promise. A rejection comes back as `{"error": message}`.
    pub async fn call_ui(&self, module: &str, function: &str, args: Vec<Value>) -> Value {
        let script = r#"
            const [module, name, args, done] = arguments;
            import(module)
              .then((m) => m[name](...args))
              .then((value) => done(value === undefined ? null : value),
                    (error) => done({ error: String(error && error.message || error) }));
        "#;
        self.execute_async(script, vec![json!(module), json!(function), json!(args)])
            .await
    }

    /// Opens a native confirm through `ui/backend.js` (as every destructive gesture does), its
    /// button labelled `action`, and returns what the UI received: true for the action, false
    /// for Cancel. Pair it with [`Harness::answer_dialog`] in a `tokio::join!`.
    pub async fn confirm(&self, title: &str, message: &str, action: &str) -> Value {
        self.call_ui(
            "/backend.js",
            "confirm",
            vec![json!(title), json!(message), json!(action)],
        )
        .await
    }

    /// Screenshot of the app's main window as the X server shows it (what a user sees) to
    /// `target/e2e-screenshots/<test>/<name>.png`. Take it after waiting for the state to show.
    /// (WebKitWebDriver's own screenshot command hangs under Xvfb here, so this reads the
    /// window's pixels from the display instead.)
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let display = self
            .shared
            .display
            .as_deref()
            .expect("screenshots need a display");
        let window = windows_on(display, "Paseo", true)
            .await
            .first()
            .map_or_else(|| "root".to_string(), u64::to_string);
        let path = screenshot_dir(&self.shared.test).join(format!("{name}.png"));
        assert!(
            capture(display, &window, &path),
            "import could not capture window {window}"
        );
        path
    }

    /// Switches the WebDriver session to the app window labelled `label` (one of `n` windows)
    /// once that window is ready.
    pub async fn switch_to_window(&self, label: &str, n: usize) {
        poll(&format!("window {label} to be ready"), TIMEOUT, || async {
            let handles = poll(&format!("{n} windows"), TIMEOUT, || async {
                let handles = self.client.windows().await.ok()?;
                (handles.len() == n).then_some(handles)
            })
            .await;
            for handle in handles {
                self.client.switch_to_window(handle).await.ok()?;
                let found = self.client.execute(WINDOW_STATE, vec![]).await.ok()?;
                if found == json!([label, "true", true]) {
                    return Some(());
                }
            }
            None
        })
        .await
    }

    /// The pid of the app process (found by its executable and this harness' marker).
    pub fn pid(&self) -> u32 {
        let app = std::fs::canonicalize(APP).unwrap();
        let pids: Vec<u32> = processes_with_marker(&self.shared.marker)
            .into_iter()
            .filter(|(pid, _)| {
                std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() == Some(&app)
            })
            .map(|(pid, _)| pid)
            .collect();
        assert_eq!(pids.len(), 1, "expected one app process, found {pids:?}");
        pids[0]
    }

    /// The data root the app was given.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Ends the WebDriver session, then stops tauri-driver and everything under it.
    pub async fn quit(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.client.clone().close()).await;
        self.driver.kill();
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared.failure_screenshot();
        }
        // The driver's Drop kills its process group.
    }
}

/// Where the element `arguments[0]` is, the viewport, and what is drawn at the element's centre:
/// why a click found it not interactable.
const CLICK_DIAGNOSIS: &str = "const el = document.querySelector(arguments[0]);
    const r = el.getBoundingClientRect();
    const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return {rect: [r.x, r.y, r.width, r.height], inner: [innerWidth, innerHeight],
        at: at ? at.outerHTML.slice(0, 120) : null, vis: document.visibilityState,
        focus: document.hasFocus()};";

/// The window's label, whether the UI is ready, and whether it is laid out at its real size (a
/// new window starts small).
const WINDOW_STATE: &str = "return [document.body.dataset.window || '', \
    document.body.dataset.ready || '', innerWidth >= 1000 && innerHeight >= 600]";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("no free loopback port")
}

fn tauri_driver() -> PathBuf {
    if let Some(found) = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("tauri-driver"))
            .find(|candidate| candidate.is_file())
    }) {
        return found;
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    let fallback = Path::new(&home).join(".cargo/bin/tauri-driver");
    assert!(
        fallback.is_file(),
        "tauri-driver not found (run scripts/setup.sh)"
    );
    fallback
}

impl Harness {
    /// Starts the app under tauri-driver and opens a WebDriver session on it; returns once the
    /// page has loaded.
    pub async fn launch(&self, args: &[&str]) -> App {
        self.launch_with(args, &[]).await
    }

    /// [`Harness::launch`], then waits until the UI has booted ([`App::wait_ready`]).
    pub async fn launch_ready(&self, args: &[&str]) -> App {
        let app = self.launch(args).await;
        app.wait_ready().await;
        app
    }

    /// Like [`Harness::launch`] with extra environment for the app.
    pub async fn launch_with(&self, args: &[&str], env: &[(&str, &str)]) -> App {
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".into(), json!("wry"));
        capabilities.insert(
            "tauri:options".into(),
            json!({ "application": APP, "args": args }),
        );
        let mut attempt = 0;
        let (client, driver) = loop {
            attempt += 1;
            let (driver, address) = self.start_driver(env).await;
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            let session = bounded(
                "new session",
                ClientBuilder::new(connector)
                    .capabilities(capabilities.clone())
                    .connect(&format!("http://{address}")),
            )
            .await;
            match session {
                Ok(client) => break (client, driver),
                // WebKitWebDriver found its port taken after it was chosen free, by a process
                // that accepts connections there (another test's app or driver): the ports
                // looked up, and only the session says otherwise. Other ports are tried.
                Err(error)
                    if attempt < 3 && driver.stderr().contains("Unable to listen for HTTP") =>
                {
                    eprintln!("WebDriver session failed ({error}): its port was taken; retrying");
                }
                Err(error) => panic!(
                    "WebDriver session failed: {error}\ntauri-driver stderr:\n{}",
                    driver.stderr()
                ),
            }
        };
        let app = App {
            client,
            driver,
            shared: self.shared.clone(),
            home: self.home.clone(),
        };
        poll("the page to load", TIMEOUT, || async {
            let state = app
                .client
                .execute("return document.readyState", vec![])
                .await
                .ok()?;
            (state == json!("complete")).then_some(())
        })
        .await;
        app
    }

    /// Starts tauri-driver (with `env` for the app) and returns it with its address once it and
    /// WebKitWebDriver accept connections.
    async fn start_driver(&self, env: &[(&str, &str)]) -> (Proc, String) {
        // A port chosen free can be taken by another process before tauri-driver binds it
        // (tests run in parallel, each app binds an MCP port): then the driver exits at once,
        // and a second pair of ports is tried.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let port = free_port();
            let native_port = free_port();
            let mut command = self.command(tauri_driver());
            command.args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ]);
            for (key, value) in env {
                command.env(key, value);
            }
            let mut driver = self.spawn("tauri-driver", command);
            let address = format!("127.0.0.1:{port}");
            let native = format!("127.0.0.1:{native_port}");
            // tauri-driver listens at once but forwards to WebKitWebDriver, which may still be
            // starting: a session is only possible once both accept connections.
            let outcome = poll(
                "tauri-driver and WebKitWebDriver to listen",
                TIMEOUT,
                || {
                    let up = std::net::TcpStream::connect(&address).is_ok()
                        && std::net::TcpStream::connect(&native).is_ok();
                    let exited = driver.exited();
                    async move {
                        match exited {
                            Some(status) => Some(Err(status)),
                            None => up.then_some(Ok(())),
                        }
                    }
                },
            )
            .await;
            match outcome {
                Ok(()) => return (driver, address),
                Err(status) if attempt < 3 => {
                    eprintln!("tauri-driver exited early ({status}); retrying on other ports");
                }
                Err(status) => panic!("tauri-driver exited early: {status}\n{}", driver.stderr()),
            }
        }
    }
}
