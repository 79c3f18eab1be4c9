//! Powers (SPEC 14): whether an agent acts without asking (`full`) or asks the user before it
//! acts (`asks`), derived from its provider (kind, and how the user's configuration launches
//! it) and its mode. The one place the rule lives; the policy compares a caller's power with
//! what it asks for ([`super::held`]), and the UI shows it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config::AgentConfig;
use super::provider::ProviderKind;

/// What an agent may do without the user. Ordered: `Asks < Full`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Power {
    Asks,
    Full,
}

impl Power {
    pub fn as_str(&self) -> &'static str {
        match self {
            Power::Asks => "asks",
            Power::Full => "full",
        }
    }
}

/// The Claude Code mode that acts without asking.
pub const CLAUDE_FULL_MODE: &str = "bypassPermissions";
/// Claude Code's `auto` mode also acts without asking the user (a classifier and the user's
/// auto-mode rules approve instead), so it is full power too.
pub const CLAUDE_AUTO_MODE: &str = "auto";
/// The Codex approval policy that never asks.
pub const CODEX_FULL_MODE: &str = "never";
/// The Claude Code mode the app starts an agent in when it has none (SPEC 14: the user's own
/// `permissions.defaultMode` must not decide for an agent the rule counts as asking).
pub const CLAUDE_ASKING_MODE: &str = "default";
/// The Codex approval policy the app starts an agent with when it has none, for the same
/// reason (`approval_policy` in `~/.codex/config.toml`); its sandbox is then read-only.
pub const CODEX_ASKING_MODE: &str = "on-request";

/// What the power rule reads of a provider: its kind, and what the user's configuration adds
/// to its launch (config.json `command` and the values of its `env`), where a flag can make the
/// CLI act without asking whatever the agent's mode says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderTrust {
    /// `None`: a kind the rule does not know (a provider the configuration does not define, a
    /// test's stand-in), so `full`.
    pub kind: Option<ProviderKind>,
    /// The configured argv prefix, then the configured environment's values.
    pub launch: Vec<String>,
    /// Configured `unconfined` (SPEC 16): its agents run outside the sandbox.
    pub unconfined: bool,
}

impl ProviderTrust {
    /// The same, keeping of its launch only what the rule reads: nothing unless it bypasses
    /// permissions. The engine asks the rule for the power of every agent in every snapshot, and
    /// an empty launch costs no words to split.
    pub fn reduced(mut self) -> Self {
        if !launch_bypasses(self.kind, &self.launch) {
            self.launch = Vec::new();
        }
        self
    }

    /// A provider of `kind` launched as the app launches it by default.
    pub fn of_kind(kind: ProviderKind) -> Self {
        ProviderTrust {
            kind: Some(kind),
            ..Default::default()
        }
    }
}

/// The power of an agent of `provider` with `config`. Shell and command agents run what they
/// are given; Claude Code acts without asking in `bypassPermissions` and `auto`, Codex with
/// approval `never` outside a read-only sandbox or `on-request` in `danger-full-access` (nothing
/// needs escalating there), and either whenever its configured launch bypasses permissions
/// ([`launch_bypasses`]). An unset mode asks: the app starts such an agent in an asking mode
/// ([`CLAUDE_ASKING_MODE`], [`CODEX_ASKING_MODE`]). A kind this rule does not know is `full`,
/// so nothing unknown is ever trusted to ask.
pub fn power(provider: &ProviderTrust, config: &AgentConfig) -> Power {
    let mode = config.mode.as_deref().filter(|m| !m.is_empty());
    let full = match provider.kind {
        Some(ProviderKind::Claude) => matches!(mode, Some(CLAUDE_FULL_MODE | CLAUDE_AUTO_MODE)),
        Some(ProviderKind::Codex) => {
            let sandbox = config.extra.get("sandbox").and_then(Value::as_str);
            let mode = mode.unwrap_or(CODEX_ASKING_MODE);
            (mode == CODEX_FULL_MODE && sandbox != Some("read-only"))
                || (mode == CODEX_ASKING_MODE && sandbox == Some("danger-full-access"))
        }
        _ => return Power::Full,
    };
    if full || launch_bypasses(provider.kind, &provider.launch) {
        Power::Full
    } else {
        Power::Asks
    }
}

/// Whether a configured launch makes the CLI of `kind` act without asking: a flag or config
/// override that bypasses its permissions, seen in any argument or environment value (split on
/// spaces too, so `sh -c "claude --dangerously-skip-permissions \"$@\""` counts). Options
/// whose effect cannot be seen from here (Claude's `--settings`, a Codex `--profile`) count
/// too. The flags are the pinned CLIs' (Claude Code 2.1.332, Codex 0.171.0).
fn launch_bypasses(kind: Option<ProviderKind>, launch: &[String]) -> bool {
    let words: Vec<&str> = launch
        .iter()
        .flat_map(|a| a.split_whitespace())
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .collect();
    // A value given as the next word or after `=`.
    let valued = |flags: &[&str], bad: &dyn Fn(&str) -> bool| {
        words.iter().enumerate().any(|(i, w)| {
            flags.iter().any(|f| match w.strip_prefix(f) {
                Some("") => words.get(i + 1).is_some_and(|v| bad(v)),
                Some(rest) => rest.strip_prefix('=').is_some_and(bad),
                None => false,
            })
        })
    };
    match kind {
        Some(ProviderKind::Claude) => {
            words.iter().any(|w| {
                matches!(
                    *w,
                    "--dangerously-skip-permissions" | "--allow-dangerously-skip-permissions"
                ) || w.starts_with("--settings")
            }) || valued(&["--permission-mode"], &|v| {
                v == CLAUDE_FULL_MODE || v == CLAUDE_AUTO_MODE
            })
                // Bash allowed up front runs any command without asking. The option takes
                // several values: every word up to the next option is one.
                || words.iter().enumerate().any(|(i, w)| {
                    let (flag, inline) = w.split_once('=').unwrap_or((w, ""));
                    matches!(flag, "--allowedTools" | "--allowed-tools")
                        && (inline.contains("Bash")
                            || words[i + 1..]
                                .iter()
                                .take_while(|v| !v.starts_with('-'))
                                .any(|v| v.contains("Bash")))
                })
        }
        Some(ProviderKind::Codex) => {
            // `-c key=value` overrides, however quoted or spaced.
            let overrides = launch.iter().any(|a| {
                let kv: String = a
                    .chars()
                    .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
                    .collect();
                kv.contains("approval_policy=never")
                    || kv.contains("sandbox_mode=danger-full-access")
            });
            overrides
                || words.iter().any(|w| {
                    matches!(
                        *w,
                        "--dangerously-bypass-approvals-and-sandbox"
                            | "--yolo"
                            // An automatic reviewer answers instead of the user.
                            | "--approve-for-me"
                            // Hooks run that nobody trusted.
                            | "--dangerously-bypass-hook-trust"
                    ) || w.starts_with("--profile")
                })
                || valued(&["-p"], &|_| true)
                || valued(&["--ask-for-approval", "-a"], &|v| v == CODEX_FULL_MODE)
                || valued(&["--sandbox", "-s"], &|v| v == "danger-full-access")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: Option<&str>, sandbox: Option<&str>) -> AgentConfig {
        let mut c = AgentConfig {
            mode: mode.map(Into::into),
            ..Default::default()
        };
        if let Some(s) = sandbox {
            c.extra.insert("sandbox".into(), Value::from(s));
        }
        c
    }

    /// The rule's reading of a provider of the kind named `kind` (none for an unknown name).
    fn trust(kind: &str) -> ProviderTrust {
        ProviderTrust {
            kind: ProviderKind::parse(kind),
            ..Default::default()
        }
    }

    #[test]
    fn the_rule() {
        use Power::*;
        let cases = [
            ("shell", None, None, Full),
            ("command", Some("whatever"), None, Full),
            ("claude", None, None, Asks),
            ("claude", Some("default"), None, Asks),
            ("claude", Some("acceptEdits"), None, Asks),
            ("claude", Some("plan"), None, Asks),
            ("claude", Some("bypassPermissions"), None, Full),
            ("claude", Some("auto"), None, Full),
            ("claude", Some("dontAsk"), None, Asks),
            ("claude", Some("manual"), None, Asks),
            ("codex", None, None, Asks),
            ("codex", Some("on-request"), None, Asks),
            ("codex", Some("untrusted"), None, Asks),
            ("codex", Some("never"), None, Full),
            ("codex", Some("never"), Some("workspace-write"), Full),
            ("codex", Some("never"), Some("read-only"), Asks),
            (
                "codex",
                Some("on-request"),
                Some("danger-full-access"),
                Full,
            ),
            ("codex", None, Some("danger-full-access"), Full),
            ("codex", Some("untrusted"), Some("danger-full-access"), Asks),
            ("something-new", None, None, Full),
        ];
        for (kind, mode, sandbox, want) in cases {
            assert_eq!(
                power(&trust(kind), &cfg(mode, sandbox)),
                want,
                "{kind} {mode:?} {sandbox:?}"
            );
        }
        assert!(Asks < Full);
    }

    /// A provider whose configured `command` or `env` bypasses its CLI's permissions is `full`
    /// whatever the agent's mode (SPEC 14): `claude-yolo` and its kin.
    #[test]
    fn a_launch_that_bypasses_permissions_is_full() {
        use Power::*;
        let cases: &[(&str, &[&str], Power)] = &[
            ("claude", &["claude"], Asks),
            ("claude", &["claude", "--model", "opus"], Asks),
            (
                "claude",
                &["claude", "--dangerously-skip-permissions"],
                Full,
            ),
            (
                "claude",
                &["claude", "--allow-dangerously-skip-permissions"],
                Full,
            ),
            (
                "claude",
                &["claude", "--permission-mode", "bypassPermissions"],
                Full,
            ),
            (
                "claude",
                &["claude", "--permission-mode=bypassPermissions"],
                Full,
            ),
            (
                "claude",
                &["claude", "--permission-mode", "acceptEdits"],
                Asks,
            ),
            (
                "claude",
                &["claude", "--permission-mode", "plan", "bypassPermissions"],
                Asks,
            ),
            (
                "claude",
                &["claude", "--allowedTools", "Read,Bash(git:*)"],
                Full,
            ),
            (
                "claude",
                &["claude", "--allowed-tools", "Read", "Bash"],
                Full,
            ),
            ("claude", &["claude", "--allowedTools=Bash"], Full),
            (
                "claude",
                &["claude", "--allowedTools", "Read", "--model", "Bash"],
                Asks,
            ),
            (
                "claude",
                &["claude", "--settings", "/home/u/yolo.json"],
                Full,
            ),
            (
                "claude",
                &[
                    "sh",
                    "-c",
                    "exec claude --dangerously-skip-permissions \"$@\"",
                    "sh",
                ],
                Full,
            ),
            ("codex", &["codex"], Asks),
            ("codex", &["codex", "--approve-for-me"], Full),
            ("codex", &["codex", "--dangerously-bypass-hook-trust"], Full),
            ("codex", &["codex", "--profile", "yolo"], Full),
            ("codex", &["codex", "-p", "yolo"], Full),
            ("claude", &["claude", "--permission-mode", "auto"], Full),
            (
                "codex",
                &["codex", "--dangerously-bypass-approvals-and-sandbox"],
                Full,
            ),
            ("codex", &["codex", "--yolo"], Full),
            ("codex", &["codex", "-c", "approval_policy=never"], Full),
            ("codex", &["codex", "-c", "approval_policy=\"never\""], Full),
            (
                "codex",
                &["codex", "--config", "approval_policy = 'never'"],
                Full,
            ),
            (
                "codex",
                &["codex", "-c", "approval_policy=\"on-request\""],
                Asks,
            ),
            (
                "codex",
                &["codex", "-c", "sandbox_mode=\"danger-full-access\""],
                Full,
            ),
            ("codex", &["codex", "-a", "never"], Full),
            ("codex", &["codex", "--ask-for-approval=never"], Full),
            ("codex", &["codex", "-a", "untrusted"], Asks),
            ("codex", &["codex", "--sandbox", "danger-full-access"], Full),
            ("codex", &["codex", "-s", "workspace-write"], Asks),
            // The other CLI's flag means nothing to this one.
            ("codex", &["codex", "--dangerously-skip-permissions"], Asks),
            ("claude", &["claude", "--yolo"], Asks),
        ];
        for (kind, launch, want) in cases {
            let p = ProviderTrust {
                kind: ProviderKind::parse(kind),
                launch: launch.iter().map(|s| s.to_string()).collect(),
                unconfined: false,
            };
            assert_eq!(power(&p, &cfg(None, None)), *want, "{kind} {launch:?}");
        }
        // An environment value is read like an argument (a wrapper taking its flags from it).
        let p = ProviderTrust {
            kind: Some(ProviderKind::Claude),
            launch: vec!["my-claude".into(), "--dangerously-skip-permissions".into()],
            unconfined: false,
        };
        assert_eq!(power(&p, &cfg(Some("plan"), None)), Full);
        // Reduced, it says the same.
        assert_eq!(power(&p.clone().reduced(), &cfg(Some("plan"), None)), Full);
        let plain = ProviderTrust {
            kind: Some(ProviderKind::Claude),
            launch: vec!["/opt/wrap".into(), "claude".into()],
            unconfined: true,
        }
        .reduced();
        assert!(plain.launch.is_empty() && plain.unconfined);
        assert_eq!(power(&plain, &cfg(None, None)), Asks);
    }
}
