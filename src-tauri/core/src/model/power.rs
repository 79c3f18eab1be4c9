//! Powers (SPEC 14): whether an agent acts without asking (`full`) or asks the user before it
//! acts (`asks`), derived from its provider's kind and its mode. The one place the rule lives;
//! the policy compares a caller's power with what it asks for, and the UI shows it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::AgentConfig;
use super::ids::AgentId;
use super::permission::PermissionRequest;

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

/// How a held turn's permission request id starts (the UI and the tray word it differently).
pub const HELD_REQUEST_PREFIX: &str = "paseo-held-";

/// The Claude Code mode that acts without asking.
pub const CLAUDE_FULL_MODE: &str = "bypassPermissions";
/// The Codex approval policy that never asks.
pub const CODEX_FULL_MODE: &str = "never";

/// The power of an agent of provider kind `kind` (`shell`, `command`, `claude`, `codex`) with
/// `config`. Shell and command agents run what they are given; Claude Code acts without asking
/// only in `bypassPermissions`; Codex only with approval `never` outside a read-only sandbox.
/// An unset mode is the CLI's own default, which asks. A kind this rule does not know is
/// treated as `full`, so nothing unknown is ever trusted to ask.
pub fn power(kind: &str, config: &AgentConfig) -> Power {
    let mode = config.mode.as_deref().filter(|m| !m.is_empty());
    match kind {
        "claude" if mode != Some(CLAUDE_FULL_MODE) => Power::Asks,
        "codex" => {
            let sandbox = config.extra.get("sandbox").and_then(Value::as_str);
            if mode == Some(CODEX_FULL_MODE) && sandbox != Some("read-only") {
                Power::Full
            } else {
                Power::Asks
            }
        }
        _ => Power::Full,
    }
}

/// A turn that would give its caller more power than it has, held until the user answers
/// (SPEC 14). Stored in the record (`heldTurn`), so it survives a restart still answerable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldTurn {
    /// The permission request's id the user answers.
    pub request_id: String,
    pub prompt: String,
    /// The agent whose call it was.
    pub caller: AgentId,
    pub caller_power: Power,
    pub power: Power,
}

impl HeldTurn {
    pub fn new(prompt: String, caller: AgentId, caller_power: Power, power: Power) -> HeldTurn {
        HeldTurn {
            request_id: format!("{HELD_REQUEST_PREFIX}{}", uuid::Uuid::new_v4()),
            prompt,
            caller,
            caller_power,
            power,
        }
    }

    /// The permission request the user sees: provider, mode, cwd and the whole prompt.
    pub fn request(&self, provider: &str, config: &AgentConfig, cwd: &str) -> PermissionRequest {
        let mode = config.mode.clone().unwrap_or_default();
        PermissionRequest {
            request_id: self.request_id.clone(),
            tool_name: format!("Run a {provider} agent with {} power", self.power.as_str()),
            input: serde_json::json!({
                "provider": provider,
                "mode": if mode.is_empty() { "default" } else { &mode },
                "cwd": cwd,
                "prompt": self.prompt,
                "power": self.power,
                "callerPower": self.caller_power,
                "caller": self.caller,
            }),
            description: Some(format!(
                "Agent {} (which asks before it acts) wants this {} agent, which would act \
                 without asking, to run the prompt below. Nothing runs until you allow it.",
                self.caller, provider
            )),
            call_id: None,
        }
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
            ("codex", None, None, Asks),
            ("codex", Some("on-request"), None, Asks),
            ("codex", Some("untrusted"), None, Asks),
            ("codex", Some("never"), None, Full),
            ("codex", Some("never"), Some("workspace-write"), Full),
            ("codex", Some("never"), Some("read-only"), Asks),
            ("something-new", None, None, Full),
        ];
        for (kind, mode, sandbox, want) in cases {
            assert_eq!(
                power(kind, &cfg(mode, sandbox)),
                want,
                "{kind} {mode:?} {sandbox:?}"
            );
        }
        assert!(Asks < Full);
    }

    #[test]
    fn a_held_request_shows_provider_mode_cwd_and_the_whole_prompt() {
        let prompt = "rm -rf build && make\n".repeat(100);
        let caller = AgentId::new();
        let h = HeldTurn::new(prompt.clone(), caller, Power::Asks, Power::Full);
        let r = h.request("shell", &cfg(None, None), "/work/app");
        assert_eq!(r.request_id, h.request_id);
        assert_eq!(r.input["provider"], "shell");
        assert_eq!(r.input["mode"], "default");
        assert_eq!(r.input["cwd"], "/work/app");
        assert_eq!(r.input["prompt"], prompt.as_str());
        assert_eq!(r.input["power"], "full");
        assert_eq!(r.input["callerPower"], "asks");
        let back: HeldTurn = serde_json::from_value(serde_json::to_value(&h).unwrap()).unwrap();
        assert_eq!(back, h);
    }
}
