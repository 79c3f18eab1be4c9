//! The core has one public door, `Server::call` (each verb written once in `api/verbs`), beside
//! its event streams and its lifecycle: a public method added to the server beside them, or any
//! public method on the runtime's own handle, fails here, so no client grows a second way in.
//! Every method of the runtime's handle is the crate's own, so a client outside the core that
//! calls one does not compile.

use std::path::Path;

/// What the server may show outside the core, and why.
const ALLOWED: &[&str] = &[
    // The door: every request of every client.
    "call",
    // The event streams a client follows (this machine's, numbered for catch-up) and the hosts'.
    "subscribe",
    "subscribe_numbered",
    "hosts",
    // Lifecycle: where the data root is, finish notices let run once the MCP server is up, the
    // end, and the tests' barrier that what was submitted is on disk.
    "layout",
    "deliver_pending",
    "shutdown",
    "flush",
    // Lifecycle too: the scheduler the backend starts beside the runtime answers the schedule
    // verbs (SPEC 20), which still come through the door.
    "set_schedules",
];

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.display().to_string(), text));
        }
    }
}

/// The public methods in every `impl <ty>` block of `text`.
fn public_methods(text: &str, ty: &str) -> Vec<String> {
    let opening = format!("impl {ty} {{");
    let mut found = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with(&opening) {
            inside = true;
        } else if line.starts_with('}') {
            inside = false;
        } else if inside {
            let rest = line.strip_prefix("    pub ");
            let rest = rest.map(|r| r.strip_prefix("async ").unwrap_or(r));
            if let Some(name) = rest.and_then(|r| r.strip_prefix("fn ")) {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push(name);
            }
        }
    }
    found
}

/// Every `(file, method)` public in an `impl <ty>` block of the core, and how many blocks.
fn public_of(ty: &str) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut public = Vec::new();
    let mut blocks = 0;
    for (path, text) in &files {
        blocks += text.matches(&format!("\nimpl {ty} {{")).count();
        for name in public_methods(text, ty) {
            public.push(format!("{path}: {name}"));
        }
    }
    (public, blocks)
}

#[test]
fn the_server_has_one_public_door() {
    let (public, blocks) = public_of("Server");
    assert!(blocks >= 1, "the server's impl blocks were not found");
    let extra: Vec<_> = public
        .iter()
        .filter(|m| !ALLOWED.iter().any(|a| m.ends_with(&format!(": {a}"))))
        .collect();
    assert!(
        extra.is_empty(),
        "public methods of Server beside its door (add a verb in api/verbs instead): {extra:#?}"
    );
    assert!(public.iter().any(|m| m.ends_with(": call")), "{public:#?}");
}

#[test]
fn the_runtime_handle_is_the_cores_own() {
    let (public, blocks) = public_of("RuntimeHandle");
    assert!(blocks >= 5, "the handle's impl blocks were not found");
    assert!(
        public.is_empty(),
        "public methods of RuntimeHandle (make them pub(crate); clients go through Server): \
         {public:#?}"
    );
}

#[test]
fn the_scan_sees_a_public_method() {
    let text =
        "impl Server {\n    pub async fn sneak(&self) {}\n    pub(crate) fn ok(&self) {}\n}\n";
    assert_eq!(public_methods(text, "Server"), vec!["sneak".to_string()]);
    assert!(public_methods(text, "RuntimeHandle").is_empty());
}
