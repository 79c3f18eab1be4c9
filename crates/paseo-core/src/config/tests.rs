use super::*;

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, "config.json").map_err(|e| e.to_string())
}

#[test]
fn missing_file_gives_the_builtin_providers() {
    let dir = tempfile::tempdir().unwrap();
    let c = Config::load(dir.path()).unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(
        c.providers.keys().collect::<Vec<_>>(),
        ["claude", "codex", "shell"]
    );
    assert_eq!(c.providers["claude"].kind, ProviderKind::Claude);
}

#[test]
fn builtins_take_overrides_and_command_providers_are_added() {
    let c = parse(
        r#"{"providers": {
            "claude": {"command": ["/opt/wrap", "claude"], "env": {"ANTHROPIC_BASE_URL": "http://x"}},
            "mybot": {"kind": "command", "label": "My bot", "command": ["bot", "--go", "{prompt}"],
                      "stdin": false, "env": {}, "models": ["a", "b"]}
         }, "mcp": {"port": 7777}}"#,
    )
    .unwrap();
    let claude = &c.providers["claude"];
    assert_eq!(claude.kind, ProviderKind::Claude);
    assert_eq!(claude.command.as_deref().unwrap(), ["/opt/wrap", "claude"]);
    assert_eq!(claude.env["ANTHROPIC_BASE_URL"], "http://x");
    let bot = &c.providers["mybot"];
    assert_eq!(bot.kind, ProviderKind::Command);
    assert_eq!(bot.label.as_deref(), Some("My bot"));
    assert_eq!(bot.models, ["a", "b"]);
    assert!(c.providers.contains_key("shell"));
    assert_eq!(c.mcp.port, Some(7777));
    assert_eq!(c.storage.timeline_max_bytes, 64 << 20, "the default");
    let c = parse(r#"{"storage": {"timelineMaxBytes": 1048576}}"#).unwrap();
    assert_eq!(c.storage.timeline_max_bytes, 1 << 20);
    assert_eq!(c.start_timeout, DEFAULT_START_TIMEOUT);
    let c = parse(r#"{"startTimeoutSecs": 5}"#).unwrap();
    assert_eq!(c.start_timeout, std::time::Duration::from_secs(5));
    assert!(parse(r#"{"startTimeoutSecs": 0}"#).is_err());
}

#[test]
fn bad_configs_name_the_file_and_the_field() {
    let cases = [
        ("{", "config.json: invalid JSON"),
        (
            "[]",
            "config.json: (top level): invalid type: sequence, expected an object",
        ),
        (
            r#"{"providers": {"mybot": {"kind": "command"}}}"#,
            "config.json: providers.mybot.command: expected a non-empty array of strings",
        ),
        (
            r#"{"providers": {"mybot": {"kind": "command", "command": []}}}"#,
            "config.json: providers.mybot.command: expected a non-empty array of strings",
        ),
        (
            r#"{"providers": {"mybot": {"kind": "command", "command": ["a", 3]}}}"#,
            "config.json: providers.mybot.command: expected a non-empty array of strings",
        ),
        (
            r#"{"providers": {"mybot": {"kind": "robot", "command": ["a"]}}}"#,
            "config.json: providers.mybot.kind: unknown variant `robot`, expected one of `shell`, `command`, `claude`, `codex`",
        ),
        (
            r#"{"providers": {"mybot": {"command": ["a"]}}}"#,
            "config.json: providers.mybot.kind: missing",
        ),
        (
            r#"{"providers": {"mybot": {"kind": "command", "command": ["a"], "stdin": "yes"}}}"#,
            "config.json: providers.mybot.stdin: invalid type: string \"yes\", expected a boolean",
        ),
        (
            r#"{"providers": {"mybot": {"kind": "command", "command": ["sh", "-c", "bot '{prompt}'"]}}}"#,
            "config.json: providers.mybot.command[2]: {prompt} must be a whole argument",
        ),
        (
            r#"{"providers": {"mybot": {"kind": "command", "command": ["bash", "-c", "{prompt}"]}}}"#,
            "config.json: providers.mybot.command[2]: {prompt} is the script bash runs with -c",
        ),
        (
            r#"{"providers": {"claude": {"env": {"A": 1}}}}"#,
            "config.json: providers.claude.env.A: invalid type: integer `1`, expected a string",
        ),
        (
            r#"{"providers": {"claude": {"kind": "codex"}}}"#,
            "config.json: providers.claude.kind: the built-in provider is of kind",
        ),
        (
            r#"{"providers": {"a/b": {"kind": "shell"}}}"#,
            "config.json: providers.a/b: invalid provider id",
        ),
        (
            r#"{"providers": {"shell": {"colour": "red"}}}"#,
            "config.json: providers.shell.colour: unknown field",
        ),
        (
            r#"{"mcp": {"port": 70000}}"#,
            "config.json: mcp.port: expected a port number",
        ),
        (
            r#"{"providers": 3}"#,
            "config.json: providers: invalid type: integer `3`, expected an object",
        ),
        (
            r#"{"storage": {"timelineMaxBytes": 1000}}"#,
            "config.json: storage.timelineMaxBytes: expected a number of bytes, at least 65536",
        ),
        (
            r#"{"storage": {"timelineMaxBytes": "64M"}}"#,
            "config.json: storage.timelineMaxBytes: expected a number of bytes",
        ),
        (
            r#"{"storage": {"other": 1}}"#,
            "config.json: storage.other: unknown field",
        ),
    ];
    for (text, want) in cases {
        let err = parse(text).unwrap_err();
        assert!(err.starts_with(want), "{text}: got {err:?}, want {want:?}");
    }
}

/// What serde would take on its own but no version of the file accepted: an array for an
/// object, an enum as a one-key object, `null` for a setting.
#[test]
fn shapes_serde_would_take_stay_mistakes() {
    for (text, path) in [
        (r#"{"limits": [5]}"#, "limits"),
        (
            r#"{"providers": {"claude": [["/opt/wrap"]]}}"#,
            "providers.claude",
        ),
        (r#"{"hosts": [["box", "box"]]}"#, "hosts[0]"),
        (
            r#"{"providers": {"b": {"kind": {"command": null}, "command": ["b"]}}}"#,
            "providers.b.kind",
        ),
        (
            r#"{"sandbox": {"engine": {"landlock": null}}}"#,
            "sandbox.engine",
        ),
        (
            r#"{"providers": {"claude": {"label": null}}}"#,
            "providers.claude.label",
        ),
        (r#"{"budget": null}"#, "budget"),
        (r#"{"mcp": {"port": null}}"#, "mcp.port"),
    ] {
        let e = parse(text).unwrap_err();
        assert!(
            e.starts_with(&format!("config.json: {path}: ")),
            "{text}: {e}"
        );
    }
}

#[test]
fn a_bad_file_is_reported_copied_aside_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = Config::path(dir.path());
    for text in ["{ not json", "[3]"] {
        std::fs::write(&path, text).unwrap();
        let (c, notices) = Config::load_or_default(dir.path());
        assert_eq!(c, Config::default());
        assert_eq!(notices.len(), 1, "{notices:?}");
        let notice = &notices[0];
        assert!(notice.contains("config.json"), "{notice}");
        let copy = notice.rsplit("a copy is in ").next().unwrap();
        let copy = copy.trim_end_matches(')');
        assert_eq!(std::fs::read_to_string(copy).unwrap(), text);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "left for the user to fix"
        );
    }
    // An unreadable one (a directory): reported, left alone.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let (_, notices) = Config::load_or_default(dir.path());
    assert!(notices[0].contains("could not be set aside"), "{notices:?}");
    assert!(path.is_dir());
    // A good file: no notice.
    std::fs::remove_dir(&path).unwrap();
    std::fs::write(&path, "{}").unwrap();
    assert!(Config::load_or_default(dir.path()).1.is_empty());
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("config.json")).unwrap();
    let err = Config::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("config.json"), "{err}");
}

/// An unknown key (a typo, or a key a newer version writes) is a warning and the rest of the
/// file applies; an invalid value costs only its own setting, named by its path (SPEC 11).
#[test]
fn unknown_keys_warn_and_bad_values_cost_only_their_setting() {
    let dir = tempfile::tempdir().unwrap();
    let path = Config::path(dir.path());
    let text = r#"{
        "bogus": 1,
        "providers": {
            "claude": {"command": ["/opt/wrap", "claude"], "env": {"A": "1"}, "colour": "red"},
            "mybot": {"kind": "command"}
        },
        "mcp": {"port": "seven"},
        "limits": {"maxDepth": 3, "maxLiveAgents": 0},
        "sandbox": {"hide": ["~/.k", "relative"], "network": false},
        "startTimeoutSecs": 5
    }"#;
    std::fs::write(&path, text).unwrap();
    let (c, notices) = Config::load_or_default(dir.path());
    // The rest applied.
    assert_eq!(
        c.providers["claude"].command.as_deref().unwrap(),
        ["/opt/wrap", "claude"]
    );
    assert_eq!(c.providers["claude"].env["A"], "1");
    assert_eq!(c.limits.max_depth, 3);
    assert!(!c.sandbox.network);
    assert_eq!(c.start_timeout, std::time::Duration::from_secs(5));
    // What was wrong has its default, and only that.
    let d = Config::default();
    assert_eq!(c.mcp.port, None);
    assert_eq!(c.limits.max_live_agents, d.limits.max_live_agents);
    assert_eq!(c.sandbox.hide, d.sandbox.hide);
    assert!(
        !c.providers.contains_key("mybot"),
        "a provider without its command"
    );
    // One notice per problem, each naming its path; the unknown keys as warnings.
    let notices: Vec<String> = notices.into_iter().collect();
    let find = |path: &str| {
        notices
            .iter()
            .find(|n| n.contains(&format!("config.json: {path}: ")))
            .unwrap_or_else(|| panic!("no notice names {path}: {notices:#?}"))
    };
    assert!(find("bogus").contains("ignored"), "{notices:#?}");
    assert!(find("providers.claude.colour").contains("ignored"));
    assert!(find("mcp.port").contains("default"));
    assert!(find("limits.maxLiveAgents").contains("default"));
    assert!(find("sandbox.hide[1]").contains("default"));
    find("providers.mybot.command");
    assert_eq!(notices.len(), 6, "{notices:#?}");
    assert!(notices.iter().all(|n| !n.contains("default configuration")));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "never rewritten"
    );
}

/// SPEC 18: `budget` is every new root agent's budget; a bad one names its field.
#[test]
fn budget_is_read_and_a_bad_one_names_its_field() {
    let c = parse(r#"{"budget": {"treeTokens": 200000, "treeCostUsd": 3.5}}"#).unwrap();
    let b = c.budget.unwrap();
    assert_eq!((b.tree_tokens, b.tree_cost_usd), (Some(200_000), Some(3.5)));
    assert!(parse("{}").unwrap().budget.is_none());
    assert!(parse(r#"{"budget": {}}"#).unwrap().budget.is_none());
    for (text, field) in [
        (r#"{"budget": {"treeTokens": -5}}"#, "budget.treeTokens"),
        (r#"{"budget": {"treeCostUsd": "1"}}"#, "budget.treeCostUsd"),
        (r#"{"budget": {"tokens": 5}}"#, "budget.tokens"),
    ] {
        let e = parse(text).unwrap_err();
        assert!(e.contains(field), "{text}: {e}");
    }
}

#[test]
fn the_starter_file_sets_nothing_and_its_note_is_accepted() {
    assert_eq!(parse(STARTER).unwrap(), Config::default());
    let lenient = Config::parse_lenient(STARTER, "config.json").unwrap();
    assert!(lenient.problems.is_empty(), "{:?}", lenient.problems);
    // A note beside settings leaves them as they are.
    let c = parse(r#"{"$comment": "mine", "limits": {"maxDepth": 3}}"#).unwrap();
    assert_eq!(c.limits.max_depth, 3);
}

/// Reads `value` as config.json's `key`: the configuration, or the path of the field at fault.
pub(super) fn section(key: &str, value: serde_json::Value) -> Result<Config, String> {
    let text = serde_json::json!({ key: value }).to_string();
    match Config::parse(&text, "config.json") {
        Ok(config) => Ok(config),
        Err(ConfigError::Field { path, .. }) => Err(path),
        Err(e) => Err(e.to_string()),
    }
}
