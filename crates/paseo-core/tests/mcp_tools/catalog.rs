//! The tool catalogue (SPEC 8, 9): what `tools/list` serves, the pre-approved list given to
//! Claude Code, and docs/mcp.md's count, commands, test table and schema appendix kept equal to it.

use super::*;

#[tokio::test]
async fn tools_are_listed_with_schemas_from_the_rust_types() {
    let h = Harness::start().await;
    let c = h.user().await;
    let info = c.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "paseo");
    let tools = c.list_all_tools().await.unwrap();
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "create_agent",
            "send_agent_prompt",
            "wait_for_agent",
            "get_agent",
            "get_agent_changes",
            "list_agents",
            "cancel_agent",
            "archive_agent",
            "create_worktree"
        ])
    );
    let create = tools.iter().find(|t| t.name == "create_agent").unwrap();
    let schema = Value::Object((*create.input_schema).clone());
    assert_eq!(schema["type"], "object");
    let required: BTreeSet<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        BTreeSet::from(["provider", "initialPrompt", "relationship", "workspace"])
    );
    // The tagged unions are in the schema (kinds as constants).
    let s = schema.to_string();
    for k in [
        "subagent",
        "detached",
        "current",
        "create",
        "directory",
        "worktree",
        "branch-off",
        "checkout-branch",
        "newBranch",
    ] {
        assert!(s.contains(k), "{k} missing from the create_agent schema");
    }
    assert!(create.output_schema.is_some());
    // Inlined: some clients' schema converters do not follow references.
    for t in &tools {
        let s = Value::Object((*t.input_schema).clone()).to_string();
        assert!(
            !s.contains("$ref") && !s.contains("$defs"),
            "{}: {s}",
            t.name
        );
    }
    drop(c);
    h.stop().await;
}

/// What a Claude Code agent is given pre-approved is exactly what the server serves (SPEC 9:
/// the app's own tools never wait on a permission prompt): one list, read from the tools.
#[tokio::test]
async fn the_pre_approved_tools_are_the_served_tools() {
    let h = Harness::start().await;
    let c = h.user().await;
    let served: BTreeSet<String> = c
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let a = h.root("ok hi").await;
    h.token(a.id()).await;
    // What the agent's session was given: the claude provider pre-approves exactly these.
    let given = h.seen.lock().unwrap()[&a.id()].clone();
    let approved: BTreeSet<String> = given.tools.iter().cloned().collect();
    assert!(served.contains("get_agent_changes"));
    assert_eq!(approved, served);
    drop(c);
    h.stop().await;
}

/// docs/mcp.md's Tests section says how many tools there are, which commands run the tests and
/// where each named test is: all three as the code has them, so a reader's command runs them.
#[tokio::test]
async fn the_docs_count_the_served_tools_and_name_commands_that_run_the_tests() {
    let h = Harness::start().await;
    let c = h.user().await;
    let served = c.list_all_tools().await.unwrap().len();
    drop(c);
    h.stop().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../../docs/mcp.md")).unwrap();
    let tests = &doc[doc.find("## Tests").unwrap()..];
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    let count = tests
        .split("the ")
        .find_map(|s| {
            let (w, _) = s.split_once(" tools")?;
            words.iter().position(|x| *x == w)
        })
        .expect("the Tests section says how many tools there are");
    assert_eq!(
        count, served,
        "docs/mcp.md counts {count} tools, the server serves {served}"
    );

    // Every command names a test target that exists; the tests' sources are those targets'.
    let mut sources = String::new();
    let mut commands = 0;
    for part in tests.split("cargo test -p paseo-core").skip(1) {
        let args: Vec<&str> = part
            .split('`')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        assert_eq!(args.first(), Some(&"--test"), "not a test target: {args:?}");
        let target = args.get(1).copied().unwrap_or("");
        let dir = root.join("tests").join(target);
        let files: Vec<std::path::PathBuf> = if dir.is_dir() {
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        } else {
            vec![root.join(format!("tests/{target}.rs"))]
        };
        for f in files {
            let text = std::fs::read_to_string(&f)
                .unwrap_or_else(|e| panic!("docs/mcp.md runs `--test {target}`: {e}"));
            let module = f.file_stem().unwrap().to_string_lossy().to_string();
            // A test in a module file is named with its module, as the table names it.
            sources.push_str(&text.replace("fn ", &format!("fn {module}::")));
            sources.push_str(&text);
        }
        commands += 1;
    }
    assert!(commands >= 2, "the Tests section names its commands");
    let mut rows = 0;
    for row in tests.lines().filter(|l| l.starts_with("| `")) {
        let name = row.split('`').nth(1).unwrap_or("");
        assert!(
            sources.contains(&format!("fn {name}(")),
            "docs/mcp.md names `{name}`, which none of its commands runs"
        );
        rows += 1;
    }
    assert!(rows > 10, "the table of tests was read");
}

#[tokio::test]
async fn the_docs_show_the_served_schemas() {
    let h = Harness::start().await;
    let c = h.user().await;
    let tools = c.list_all_tools().await.unwrap();
    let order = [
        "create_agent",
        "send_agent_prompt",
        "wait_for_agent",
        "get_agent",
        "get_agent_changes",
        "list_agents",
        "cancel_agent",
        "archive_agent",
        "create_worktree",
    ];
    let mut want = String::new();
    for name in order {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        let schema =
            serde_json::to_string_pretty(&Value::Object((*t.input_schema).clone())).unwrap();
        want.push_str(&format!("\n### {name}\n\n```json\n{schema}\n```\n"));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mcp.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- schemas:begin -->\n", "<!-- schemas:end -->");
    let a = doc.find(begin).unwrap() + begin.len();
    let b = doc.find(end).unwrap();
    if std::env::var_os("UPDATE_MCP_DOCS").is_some() {
        let new = format!("{}{}\n{}", &doc[..a], want.trim_start(), &doc[b..]);
        std::fs::write(&path, new).unwrap();
    } else {
        assert_eq!(
            doc[a..b].trim(),
            want.trim(),
            "docs/mcp.md is out of date: run UPDATE_MCP_DOCS=1 cargo test -p paseo-core --test mcp_tools the_docs_show"
        );
    }
    drop(c);
    h.stop().await;
}
