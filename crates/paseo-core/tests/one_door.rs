//! The runtime has one public door, `RuntimeHandle::call` (each verb written once in
//! `api/verbs`), beside its event stream and its lifecycle: a public method added to the handle
//! beside them fails here, so no client grows a second way in. Every other method of the
//! handle is the crate's own, so a client outside the core that calls one does not compile.

use std::path::Path;

/// What the handle may show outside the core, and why.
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

/// The public methods in every `impl RuntimeHandle` block of `text`.
fn public_methods(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("impl RuntimeHandle") {
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

#[test]
fn the_runtime_handle_has_one_public_door() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut public = Vec::new();
    let mut blocks = 0;
    for (path, text) in &files {
        blocks += text.matches("\nimpl RuntimeHandle").count();
        for name in public_methods(text) {
            public.push(format!("{path}: {name}"));
        }
    }
    assert!(blocks >= 5, "the handle's impl blocks were not found");
    let extra: Vec<_> = public
        .iter()
        .filter(|m| !ALLOWED.iter().any(|a| m.ends_with(&format!(": {a}"))))
        .collect();
    assert!(
        extra.is_empty(),
        "public methods of RuntimeHandle beside its door (make them pub(crate) and add a verb \
         in api/verbs): {extra:#?}"
    );
    assert!(public.iter().any(|m| m.ends_with(": call")), "{public:#?}");
}

#[test]
fn the_scan_sees_a_public_method() {
    let text = "impl RuntimeHandle {\n    pub async fn sneak(&self) {}\n    pub(crate) fn ok(&self) {}\n}\n";
    assert_eq!(public_methods(text), vec!["sneak".to_string()]);
}
