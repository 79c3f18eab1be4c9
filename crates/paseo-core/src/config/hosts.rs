//! `"hosts"` in config.json (SPEC 17): the other machines the user reaches with their own ssh,
//! `[{"name": "box", "ssh": "<destination or alias>", "command"?: ["paseo-headless"]}]`.
//! Parsed here with the rest of the file; written back (the rest kept) when the user adds or
//! removes a host.

use serde::{Deserialize, Serialize};

use super::read::{argv, check_program, Object};

/// A configured host: config.json `hosts[]` (how ssh reaches it and runs the backend there:
/// `hosts::ssh`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    pub name: String,
    /// The destination or alias ssh is given (`box`, `me@box.example`).
    pub ssh: String,
    /// The program on the host (default: `paseo-headless`, from `~/.local/bin` when installed
    /// there, else the host's PATH); `attach` is appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
}

/// The longest host name accepted: it is shown in rows and named in every tool call.
const MAX_NAME: usize = 64;

/// A host as the file spells it, refusing unknown keys and reading `command` as the providers'
/// is read. [`Host`]'s own `Deserialize` also reads the API's `addHost` request, which keeps
/// its own rules (unknown keys ignored, `command` read word by word).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Entry {
    name: String,
    ssh: String,
    #[serde(default, deserialize_with = "argv")]
    command: Option<Vec<String>>,
}

/// The hosts of the file's `hosts`, each checked as [`check`] checks a host the user adds and
/// their names unique. On error: the field path (`hosts[1].name`) and what was wrong.
pub(super) fn checked(entries: Vec<Object<Entry>>) -> Result<Vec<Host>, (String, String)> {
    let mut hosts: Vec<Host> = Vec::with_capacity(entries.len());
    for (i, Object(Entry { name, ssh, command })) in entries.into_iter().enumerate() {
        let at = |field: &str| format!("hosts[{i}].{field}");
        if let Some(argv) = &command {
            check_program(argv, &format!("hosts[{i}]"))?;
        }
        let host = Host { name, ssh, command };
        check(&host).map_err(|(field, message)| (at(field), message))?;
        if hosts.iter().any(|h| h.name == host.name) {
            return Err((
                at("name"),
                format!("a second host named {:?}: names must be unique", host.name),
            ));
        }
        hosts.push(host);
    }
    Ok(hosts)
}

/// One host's own rules; the field at fault (`name`, `ssh`) and why.
pub fn check(host: &Host) -> Result<(), (&'static str, String)> {
    let name = host.name.as_str();
    if name.trim().is_empty() {
        return Err(("name", "the name is empty".into()));
    }
    if name.chars().count() > MAX_NAME
        || name.trim() != name
        || name.chars().any(|c| c.is_control())
    {
        return Err((
            "name",
            format!("expected 1 to {MAX_NAME} characters, no control characters, no leading or trailing spaces"),
        ));
    }
    if host.destination().is_err() {
        return Err((
            "ssh",
            format!(
                "{:?} is not an ssh destination: it must not be empty or start with '-'",
                host.ssh
            ),
        ));
    }
    if host
        .ssh
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err((
            "ssh",
            format!("{:?} is not an ssh destination: it has spaces", host.ssh),
        ));
    }
    Ok(())
}

/// Sets `hosts` in `$PASEO_HOME/config.json` (creating the file if there is none); only that key
/// changes, and a file that does not parse is left for the user to fix (as
/// [`super::write_notifications`]).
pub fn write_hosts(paseo_home: &std::path::Path, hosts: &[Host]) -> Result<(), super::ConfigError> {
    let value = serde_json::to_value(hosts).map_err(|e| super::ConfigError::Json {
        file: super::Config::path(paseo_home).display().to_string(),
        message: e.to_string(),
    })?;
    super::notifications::write_key(paseo_home, "hosts", value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, "config.json").map_err(|e| e.to_string())
    }

    #[test]
    fn hosts_are_read_with_their_command() {
        let c = parse(
            r#"{"hosts": [{"name": "box", "ssh": "box"},
                {"name": "big one", "ssh": "me@big.example", "command": ["/opt/p/paseo-headless"]}]}"#,
        )
        .unwrap();
        assert_eq!(c.hosts.len(), 2);
        assert_eq!(c.hosts[0].name, "box");
        assert_eq!(c.hosts[1].ssh, "me@big.example");
        assert_eq!(
            c.hosts[1].command.as_deref(),
            Some(&["/opt/p/paseo-headless".to_string()][..])
        );
    }

    #[test]
    fn a_file_without_hosts_has_none() {
        let c = parse(r#"{"mcp": {"port": 0}}"#).unwrap();
        assert!(c.hosts.is_empty());
        assert_eq!(c.mcp.port, Some(0));
    }

    #[test]
    fn mistakes_name_the_field() {
        let cases = [
            (
                r#"{"hosts": {}}"#,
                "config.json: hosts: invalid type: map, expected a sequence",
            ),
            (
                r#"{"hosts": [1]}"#,
                "config.json: hosts[0]: invalid type: integer `1`, expected an object",
            ),
            (
                r#"{"hosts": [{"ssh": "box"}]}"#,
                "config.json: hosts[0].name: missing",
            ),
            (
                r#"{"hosts": [{"name": "box"}]}"#,
                "config.json: hosts[0].ssh: missing",
            ),
            (
                r#"{"hosts": [{"name": " ", "ssh": "box"}]}"#,
                "config.json: hosts[0].name: the name is empty",
            ),
            (
                r#"{"hosts": [{"name": "b", "ssh": "-oProxyCommand=x"}]}"#,
                "config.json: hosts[0].ssh: \"-oProxyCommand=x\" is not an ssh destination",
            ),
            (
                r#"{"hosts": [{"name": "b", "ssh": "a b"}]}"#,
                "config.json: hosts[0].ssh: \"a b\" is not an ssh destination",
            ),
            (
                r#"{"hosts": [{"name": "b", "ssh": ""}]}"#,
                "config.json: hosts[0].ssh:",
            ),
            (
                r#"{"hosts": [{"name": "b", "ssh": "b", "command": []}]}"#,
                "config.json: hosts[0].command: expected a non-empty array of strings",
            ),
            (
                r#"{"hosts": [{"name": "b", "ssh": "b", "command": [""]}]}"#,
                "config.json: hosts[0].command[0]: the program is empty",
            ),
            (
                r#"{"hosts": [{"name": "b", "ssh": "b", "port": 22}]}"#,
                "config.json: hosts[0].port: unknown field",
            ),
            (
                r#"{"hosts": [{"name": "b", "ssh": "b"}, {"name": "b", "ssh": "c"}]}"#,
                "config.json: hosts[1].name: a second host named \"b\"",
            ),
        ];
        for (text, said) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(said), "{text}: {e}");
        }
    }

    /// A start with a bad host keeps the rest of the file (SPEC 11): the hosts are left out
    /// with a notice naming the field.
    #[test]
    fn a_bad_host_at_start_costs_only_the_hosts() {
        let lenient = Config::parse_lenient(
            r#"{"mcp": {"port": 0}, "hosts": [{"name": "b", "ssh": "-x"}]}"#,
            "config.json",
        )
        .unwrap();
        assert_eq!(lenient.config.mcp.port, Some(0));
        assert!(lenient.config.hosts.is_empty());
        assert_eq!(lenient.problems.len(), 1);
        assert!(
            lenient.problems[0].notice().contains("hosts[0].ssh"),
            "{}",
            lenient.problems[0].notice()
        );
    }

    #[test]
    fn writing_sets_only_hosts_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(Config::path(dir.path()), r#"{"mcp": {"port": 0}}"#).unwrap();
        let hosts = vec![Host {
            name: "box".into(),
            ssh: "box".into(),
            command: None,
        }];
        write_hosts(dir.path(), &hosts).unwrap();
        let c = Config::load(dir.path()).unwrap();
        assert_eq!(c.hosts, hosts);
        assert_eq!(c.mcp.port, Some(0));
        write_hosts(dir.path(), &[]).unwrap();
        assert!(Config::load(dir.path()).unwrap().hosts.is_empty());
    }
}
