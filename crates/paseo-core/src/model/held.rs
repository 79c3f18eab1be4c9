//! Held turns (SPEC 14): when a new agent or a prompt has more power than the agent that asked
//! for it, and why. Power has two parts: the mode ([`super::power`]) and the reach (SPEC 16:
//! where the agent may write, and whether it is contained at all). The rule here is pure; where
//! two directories stand ([`Reach`]) is found on disk by `workspaces::reach`.

use serde::{Deserialize, Serialize};

use super::config::AgentConfig;
use super::ids::AgentId;
use super::permission::{PermissionKind, PermissionRequest, HELD_REQUEST_PREFIX};
use super::power::Power;

/// Where a new agent's (or a prompted agent's) cwd stands against its caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Inside the caller's cwd tree (and its repository, if any, is the caller's or lies inside
    /// that tree too).
    Inside,
    /// A checkout (worktree) of the caller's own repository: the same git common dir.
    OwnRepository,
    /// Anywhere else, or where it could not be told.
    Outside,
}

/// What the rule compares of an agent: its power (mode) and whether it is contained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    pub power: Power,
    pub contained: bool,
}

/// Why a turn is held: each way it has more power than its caller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum HoldReason {
    /// Its mode acts without asking; the caller's asks.
    #[serde(rename = "mode")]
    WiderMode,
    /// Its cwd is outside every directory the caller may write.
    #[serde(rename = "reach", rename_all = "camelCase")]
    OutsideReach { caller_cwd: String, cwd: String },
    /// It would run outside the sandbox; the caller runs inside it.
    #[serde(rename = "unconfined")]
    Unconfined,
}

impl HoldReason {
    fn describe(&self) -> String {
        match self {
            HoldReason::WiderMode => {
                "it would act without asking, while the agent that asked asks first".into()
            }
            HoldReason::OutsideReach { caller_cwd, cwd } => format!(
                "it would work in {cwd}, outside the reach of the agent that asked (which may \
                 write only in {caller_cwd})"
            ),
            HoldReason::Unconfined => {
                "it would run unconfined (outside the sandbox), while the agent that asked is \
                 contained"
                    .into()
            }
        }
    }
}

/// Every way a turn of `new` (in `cwd`) has more power than its caller (in `caller_cwd`);
/// empty when it has equal or less. A caller that is unconfined with full power can already do
/// anything, so no cwd is outside its reach.
pub fn hold_reasons(
    caller: Standing,
    new: Standing,
    reach: Reach,
    caller_cwd: &str,
    cwd: &str,
) -> Vec<HoldReason> {
    let mut why = Vec::new();
    if new.power > caller.power {
        why.push(HoldReason::WiderMode);
    }
    let reaches_all = caller.power == Power::Full && !caller.contained;
    if reach == Reach::Outside && !reaches_all {
        why.push(HoldReason::OutsideReach {
            caller_cwd: caller_cwd.to_string(),
            cwd: cwd.to_string(),
        });
    }
    if caller.contained && !new.contained {
        why.push(HoldReason::Unconfined);
    }
    why
}

/// The policy's answer when a turn must wait for the user: who asked, the powers compared,
/// and every way the turn has more power than its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub caller: AgentId,
    pub caller_power: Power,
    pub power: Power,
    pub reasons: Vec<HoldReason>,
}

impl Hold {
    /// `prompt`, held for this reason.
    pub fn turn(self, prompt: String) -> HeldTurn {
        HeldTurn::new(prompt, self.caller, self.caller_power, self.power).because(self.reasons)
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
    /// Why it is held. Records written before reach was part of power have none: their turns
    /// were held for a wider mode only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<HoldReason>,
    /// Set when it waits on its tree's budget (SPEC 18) instead of on power.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetHold>,
}

/// Why a turn waits on a budget (SPEC 18): whose budget was used, in words, and whether the
/// turn is a finish notice (which stays in its target's inbox meanwhile) or an agent's prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetHold {
    /// The agent whose budget its tree used up (the root, or an agent given a smaller one).
    pub agent_id: AgentId,
    /// That agent's title when the turn was held: the tree a notification names.
    #[serde(default)]
    pub tree: String,
    /// "budget: this tree used N of M tokens".
    pub words: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub notice: bool,
}

impl HeldTurn {
    pub fn new(prompt: String, caller: AgentId, caller_power: Power, power: Power) -> HeldTurn {
        HeldTurn {
            request_id: format!("{HELD_REQUEST_PREFIX}{}", uuid::Uuid::new_v4()),
            prompt,
            caller,
            caller_power,
            power,
            reasons: Vec::new(),
            budget: None,
        }
    }

    /// `prompt` (or a notice's text), held because its tree used the budget of `hold.agent_id`.
    pub fn for_budget(prompt: String, caller: AgentId, power: Power, hold: BudgetHold) -> Self {
        HeldTurn {
            budget: Some(hold),
            ..HeldTurn::new(prompt, caller, power, power)
        }
    }

    pub fn because(mut self, reasons: Vec<HoldReason>) -> HeldTurn {
        self.reasons = reasons;
        self
    }

    /// Why it is held, for the user: an old record's turn was held for its mode.
    pub fn reasons(&self) -> Vec<HoldReason> {
        if self.reasons.is_empty() {
            vec![HoldReason::WiderMode]
        } else {
            self.reasons.clone()
        }
    }

    /// The permission request the user sees: provider, mode, cwd, the whole prompt, and why.
    pub fn request(&self, provider: &str, config: &AgentConfig, cwd: &str) -> PermissionRequest {
        if let Some(b) = &self.budget {
            return self.budget_request(b, provider, cwd);
        }
        let mode = config.mode.clone().unwrap_or_default();
        let reasons = self.reasons();
        let tool_name = match reasons.first() {
            Some(HoldReason::OutsideReach { .. }) => {
                format!("Run a {provider} agent outside the caller's reach")
            }
            Some(HoldReason::Unconfined) => format!("Run an unconfined {provider} agent"),
            _ => format!("Run a {provider} agent with {} power", self.power.as_str()),
        };
        let why: Vec<String> = reasons.iter().map(HoldReason::describe).collect();
        PermissionRequest {
            request_id: self.request_id.clone(),
            kind: PermissionKind::HeldStart,
            tool_name,
            input: serde_json::json!({
                "provider": provider,
                "mode": if mode.is_empty() { "default" } else { &mode },
                "cwd": cwd,
                "prompt": self.prompt,
                "power": self.power,
                "callerPower": self.caller_power,
                "caller": self.caller,
                "reasons": reasons,
            }),
            description: Some(format!(
                "Agent {} wants this {provider} agent in {cwd} to run the prompt below, and it \
                 would have more power than the agent that asked: {}. Nothing runs until you \
                 allow it.",
                self.caller,
                why.join("; ")
            )),
            call_id: None,
        }
    }
}

impl HeldTurn {
    /// The request of a turn that waits on its tree's budget: the words say how much was used.
    fn budget_request(&self, b: &BudgetHold, provider: &str, cwd: &str) -> PermissionRequest {
        let what = if b.notice {
            "a finish notice delivered as a turn"
        } else {
            "the prompt below"
        };
        PermissionRequest {
            request_id: self.request_id.clone(),
            kind: PermissionKind::Budget,
            tool_name: b.words.clone(),
            input: serde_json::json!({
                "provider": provider,
                "cwd": cwd,
                "prompt": self.prompt,
                "caller": self.caller,
                "budgetAgentId": b.agent_id,
                "tree": b.tree,
                "notice": b.notice,
            }),
            description: Some(format!(
                "The tree of {:?} used its budget ({}), so {what} waits. Allow runs this one \
                 turn; raising the budget runs every turn that waits on it.",
                b.tree, b.words
            )),
            call_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASKS_BOXED: Standing = Standing {
        power: Power::Asks,
        contained: true,
    };
    const FULL_BOXED: Standing = Standing {
        power: Power::Full,
        contained: true,
    };
    const ASKS_FREE: Standing = Standing {
        power: Power::Asks,
        contained: false,
    };
    const FULL_FREE: Standing = Standing {
        power: Power::Full,
        contained: false,
    };

    #[test]
    fn the_hold_rule() {
        use HoldReason::*;
        use Reach::*;
        let out = || OutsideReach {
            caller_cwd: "/p".into(),
            cwd: "/home/u".into(),
        };
        let cases = [
            // Equal power, inside: never held.
            (ASKS_BOXED, ASKS_BOXED, Inside, vec![]),
            (ASKS_BOXED, ASKS_BOXED, OwnRepository, vec![]),
            (FULL_BOXED, FULL_BOXED, Inside, vec![]),
            // Lesser power is not held.
            (FULL_BOXED, ASKS_BOXED, Inside, vec![]),
            (ASKS_FREE, ASKS_BOXED, Inside, vec![]),
            // A wider mode (today's rule).
            (ASKS_BOXED, FULL_BOXED, Inside, vec![WiderMode]),
            // Outside the caller's cwd tree, whatever the mode or containment.
            (ASKS_BOXED, ASKS_BOXED, Outside, vec![out()]),
            (FULL_BOXED, FULL_BOXED, Outside, vec![out()]),
            (ASKS_FREE, ASKS_FREE, Outside, vec![out()]),
            (ASKS_BOXED, FULL_BOXED, Outside, vec![WiderMode, out()]),
            // Unconfined under a contained caller.
            (ASKS_BOXED, ASKS_FREE, Inside, vec![Unconfined]),
            (FULL_BOXED, FULL_FREE, Inside, vec![Unconfined]),
            (
                ASKS_BOXED,
                FULL_FREE,
                Outside,
                vec![WiderMode, out(), Unconfined],
            ),
            // An unconfined full caller can do anything already.
            (FULL_FREE, FULL_FREE, Outside, vec![]),
            (FULL_FREE, FULL_BOXED, Outside, vec![]),
            (FULL_FREE, ASKS_FREE, Outside, vec![]),
        ];
        for (caller, new, reach, want) in cases {
            assert_eq!(
                hold_reasons(caller, new, reach, "/p", "/home/u"),
                want,
                "{caller:?} → {new:?} ({reach:?})"
            );
        }
    }

    fn cfg() -> AgentConfig {
        AgentConfig::default()
    }

    #[test]
    fn a_held_request_shows_provider_mode_cwd_and_the_whole_prompt() {
        let prompt = "rm -rf build && make\n".repeat(100);
        let caller = AgentId::new();
        let h = HeldTurn::new(prompt.clone(), caller, Power::Asks, Power::Full)
            .because(vec![HoldReason::WiderMode]);
        let r = h.request("shell", &cfg(), "/work/app");
        assert_eq!(r.request_id, h.request_id);
        assert!(r.is_held_start());
        assert_eq!(r.input["provider"], "shell");
        assert_eq!(r.input["mode"], "default");
        assert_eq!(r.input["cwd"], "/work/app");
        assert_eq!(r.input["prompt"], prompt.as_str());
        assert_eq!(r.input["power"], "full");
        assert_eq!(r.input["callerPower"], "asks");
        assert_eq!(r.input["reasons"][0]["kind"], "mode");
        let d = r.description.unwrap();
        assert!(
            d.contains("/work/app") && d.contains("act without asking"),
            "{d}"
        );
        let back: HeldTurn = serde_json::from_value(serde_json::to_value(&h).unwrap()).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn a_held_request_says_why_with_both_paths() {
        let caller = AgentId::new();
        let reasons = vec![
            HoldReason::OutsideReach {
                caller_cwd: "/work/app".into(),
                cwd: "/home/u".into(),
            },
            HoldReason::Unconfined,
        ];
        let h = HeldTurn::new("ls".into(), caller, Power::Asks, Power::Asks).because(reasons);
        let r = h.request("claude", &cfg(), "/home/u");
        let d = r.description.unwrap();
        for what in ["/work/app", "/home/u", "outside the reach", "unconfined"] {
            assert!(d.contains(what), "{what} in {d}");
        }
        assert_eq!(r.tool_name, "Run a claude agent outside the caller's reach");
        assert_eq!(r.input["reasons"][0]["kind"], "reach");
        assert_eq!(r.input["reasons"][0]["callerCwd"], "/work/app");
        assert_eq!(r.input["reasons"][0]["cwd"], "/home/u");
        assert_eq!(r.input["reasons"][1]["kind"], "unconfined");
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(json["reasons"][0]["callerCwd"], "/work/app");
        let back: HeldTurn = serde_json::from_value(json).unwrap();
        assert_eq!(back, h);
    }

    /// A record written before reach was part of power: no `reasons`. It loads, says it was
    /// held for its mode, and is written back in the same shape.
    #[test]
    fn an_old_held_turn_loads_and_reads_as_held_for_its_mode() {
        let caller = AgentId::new();
        let old = serde_json::json!({
            "requestId": "paseo-held-5b0e8a8e-3f59-4a35-a1b2-0c3d4e5f6a7b",
            "prompt": "make",
            "caller": caller,
            "callerPower": "asks",
            "power": "full",
        });
        let h: HeldTurn = serde_json::from_value(old.clone()).unwrap();
        assert!(h.reasons.is_empty());
        assert_eq!(h.reasons(), vec![HoldReason::WiderMode]);
        let r = h.request("shell", &cfg(), "/w");
        assert_eq!(r.tool_name, "Run a shell agent with full power");
        assert!(r.description.unwrap().contains("act without asking"));
        assert_eq!(serde_json::to_value(&h).unwrap(), old);
    }

    /// A whole record of the old shape, read as the store reads it at start.
    #[test]
    fn an_old_record_with_a_held_turn_loads() {
        let json = r#"{
            "id": "2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d",
            "provider": "shell",
            "cwd": "/home/me/src/app",
            "title": "helper",
            "lastStatus": "idle",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
            "heldTurn": {
                "requestId": "paseo-held-5b0e8a8e-3f59-4a35-a1b2-0c3d4e5f6a7b",
                "prompt": "make",
                "caller": "0b6c2a3e-1111-4222-8333-444455556666",
                "callerPower": "asks",
                "power": "full"
            }
        }"#;
        let rec: crate::model::AgentRecord = serde_json::from_str(json).unwrap();
        let h = rec.held_turn.as_deref().unwrap();
        assert_eq!(h.prompt, "make");
        let r = h.request(&rec.provider, &rec.config, &rec.cwd);
        assert!(r.is_held_start());
        assert_eq!(r.input["cwd"], "/home/me/src/app");
        assert_eq!(r.input["reasons"][0]["kind"], "mode");
        let back = serde_json::to_value(&rec).unwrap();
        assert!(back["heldTurn"].get("reasons").is_none(), "{back}");
    }
}
