//! Budgets (SPEC 18): a cap on a tree's usage, in tokens (input + output + cache writes) and/or
//! USD (where the CLI reports cost). The rule is pure: whether a tree's usage reached its cap,
//! what is left, and whether a child's budget fits in what its caller's tree has left (budgets,
//! like powers, never grow down a tree).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::usage::Usage;

/// A cap on a tree's usage (config.json `budget`, a record's `budget`, `create_agent`
/// `budget`). Either part may be absent: that part is not capped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Budget {
    /// Tokens (input + output + cache writes) the whole tree may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_tokens: Option<u64>,
    /// USD the whole tree may cost (where the CLI reports cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_cost_usd: Option<f64>,
}

// Costs are never NaN: every way in ([`Budget::parse`], [`Budget::left`]) refuses or clamps it.
impl Eq for Budget {}

/// What a tree used, as a budget counts it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spent {
    pub tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Spent {
    /// What a budget counts of `u`: cache reads are not counted (SPEC 18).
    pub fn of(u: &Usage) -> Spent {
        Spent {
            tokens: u
                .input_tokens
                .saturating_add(u.output_tokens)
                .saturating_add(u.cache_write_tokens),
            cost_usd: u.cost_usd,
        }
    }

    /// Adds another's figure (a tree's total), as [`Usage::add`] adds usage.
    pub fn add(&mut self, o: Spent) {
        self.tokens = self.tokens.saturating_add(o.tokens);
        if let Some(c) = o.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }

    /// What a running figure grew by from `self` to `later` (an agent's usage only grows).
    pub fn growth(self, later: Spent) -> Spent {
        Spent {
            tokens: later.tokens.saturating_sub(self.tokens),
            cost_usd: later.cost_usd.map(|c| c - self.cost_usd.unwrap_or(0.0)),
        }
    }
}

/// A budget's part that a child's budget asked too much of, and the words for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The input field at fault (`budget.treeTokens`, `budget.treeCostUsd`).
    pub field: &'static str,
    pub message: String,
}

impl Budget {
    pub fn is_empty(&self) -> bool {
        self.tree_tokens.is_none() && self.tree_cost_usd.is_none()
    }

    /// Whether `spent` reached the cap (any part of it).
    pub fn reached(&self, spent: Spent) -> bool {
        self.tree_tokens.is_some_and(|cap| spent.tokens >= cap)
            || self
                .tree_cost_usd
                .is_some_and(|cap| spent.cost_usd.unwrap_or(0.0) >= cap)
    }

    /// What is left of it after `spent` (never below zero).
    pub fn left(&self, spent: Spent) -> Budget {
        Budget {
            tree_tokens: self.tree_tokens.map(|cap| cap.saturating_sub(spent.tokens)),
            tree_cost_usd: self
                .tree_cost_usd
                .map(|cap| (cap - spent.cost_usd.unwrap_or(0.0)).max(0.0)),
        }
    }

    /// The tighter of two caps, part by part.
    pub fn min(self, other: Budget) -> Budget {
        Budget {
            tree_tokens: match (self.tree_tokens, other.tree_tokens) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            tree_cost_usd: match (self.tree_cost_usd, other.tree_cost_usd) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }

    /// Whether this (a child's) fits in `left` (what its caller's tree has left): each part
    /// the tree caps is at most what is left of it. A part the tree does not cap is free.
    pub fn fits_in(&self, left: &Budget) -> Result<(), TooLarge> {
        if let (Some(asked), Some(have)) = (self.tree_tokens, left.tree_tokens) {
            if asked > have {
                return Err(TooLarge {
                    field: "budget.treeTokens",
                    message: format!(
                        "{asked} tokens is more than the calling agent's tree has left ({have} \
                         tokens): a child's budget is at most what its tree has left"
                    ),
                });
            }
        }
        if let (Some(asked), Some(have)) = (self.tree_cost_usd, left.tree_cost_usd) {
            if asked > have {
                return Err(TooLarge {
                    field: "budget.treeCostUsd",
                    message: format!(
                        "${asked:.2} is more than the calling agent's tree has left \
                         (${have:.2}): a child's budget is at most what its tree has left"
                    ),
                });
            }
        }
        Ok(())
    }

    /// What a held turn's request says (SPEC 18): "budget: this tree used N of M tokens", or
    /// the cost when that is the part reached.
    pub fn stop_words(&self, spent: Spent) -> String {
        match (self.tree_tokens, self.tree_cost_usd) {
            (Some(cap), _) if spent.tokens >= cap => {
                format!("budget: this tree used {} of {cap} tokens", spent.tokens)
            }
            (_, Some(cap)) => format!(
                "budget: this tree used ${:.2} of ${cap:.2}",
                spent.cost_usd.unwrap_or(0.0)
            ),
            (Some(cap), None) => {
                format!("budget: this tree used {} of {cap} tokens", spent.tokens)
            }
            (None, None) => "budget".to_string(),
        }
    }

    /// Reads a budget at `path` (config.json `budget`, a request's `budget`): an object with
    /// `treeTokens` (a whole number) and/or `treeCostUsd` (a number ≥ 0); an error names the
    /// field at fault.
    pub fn parse(v: &Value, path: &str) -> Result<Budget, (String, String)> {
        let obj = v
            .as_object()
            .ok_or_else(|| (path.to_string(), "expected an object".to_string()))?;
        let mut b = Budget::default();
        for (k, v) in obj {
            match k.as_str() {
                "treeTokens" => {
                    b.tree_tokens = Some(v.as_u64().ok_or_else(|| {
                        (
                            format!("{path}.treeTokens"),
                            "expected a whole number of tokens (0 or more)".to_string(),
                        )
                    })?)
                }
                "treeCostUsd" => {
                    b.tree_cost_usd = Some(
                        v.as_f64()
                            .filter(|c| c.is_finite() && *c >= 0.0)
                            .ok_or_else(|| {
                                (
                                    format!("{path}.treeCostUsd"),
                                    "expected a number of USD (0 or more)".to_string(),
                                )
                            })?,
                    )
                }
                other => {
                    return Err((
                        format!("{path}.{other}"),
                        "unknown field (expected treeTokens or treeCostUsd)".to_string(),
                    ))
                }
            }
        }
        Ok(b)
    }
}

/// A tree's budget as `get_agent` and the agent header show it: the agent whose budget it is
/// (the nearest one above or at the agent), the cap, what its tree used, and what is left (the
/// tightest of every budget above, so it is what the agent may still spend).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeBudget {
    pub agent_id: super::ids::AgentId,
    pub budget: Budget,
    pub used: Spent,
    pub left: Budget,
    /// Whether any budget above the agent (or its own) is used up: its next turn from an
    /// agent waits for the user.
    pub reached: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spent(tokens: u64, cost: Option<f64>) -> Spent {
        Spent {
            tokens,
            cost_usd: cost,
        }
    }

    #[test]
    fn the_budget_rule() {
        let tokens = Budget {
            tree_tokens: Some(100),
            tree_cost_usd: None,
        };
        assert!(!tokens.reached(spent(99, Some(50.0))));
        assert!(tokens.reached(spent(100, None)));
        let cost = Budget {
            tree_tokens: None,
            tree_cost_usd: Some(1.0),
        };
        assert!(!cost.reached(spent(1_000_000, Some(0.99))));
        assert!(!cost.reached(spent(1_000_000, None)));
        assert!(cost.reached(spent(0, Some(1.0))));
        assert!(!Budget::default().reached(spent(u64::MAX, Some(1e9))));
        assert_eq!(
            tokens.left(spent(130, None)).tree_tokens,
            Some(0),
            "never below zero"
        );
        assert_eq!(tokens.left(spent(30, None)).tree_tokens, Some(70));
        // Cache reads are not counted; cache writes are.
        let u = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 1000,
            cache_write_tokens: 4,
            ..Usage::default()
        };
        assert_eq!(Spent::of(&u).tokens, 7);
    }

    #[test]
    fn a_child_budget_never_grows_down_the_tree() {
        let left = Budget {
            tree_tokens: Some(500),
            tree_cost_usd: Some(2.0),
        };
        let ok = Budget {
            tree_tokens: Some(500),
            tree_cost_usd: None,
        };
        assert!(ok.fits_in(&left).is_ok());
        let more = Budget {
            tree_tokens: Some(501),
            tree_cost_usd: None,
        };
        let e = more.fits_in(&left).unwrap_err();
        assert_eq!(e.field, "budget.treeTokens");
        assert!(e.message.contains("500"), "{}", e.message);
        let dear = Budget {
            tree_tokens: None,
            tree_cost_usd: Some(2.5),
        };
        assert_eq!(dear.fits_in(&left).unwrap_err().field, "budget.treeCostUsd");
        // A tree without a cap on a part leaves that part free.
        assert!(more.fits_in(&Budget::default()).is_ok());
        assert_eq!(
            left.min(Budget {
                tree_tokens: Some(10),
                tree_cost_usd: None
            }),
            Budget {
                tree_tokens: Some(10),
                tree_cost_usd: Some(2.0)
            }
        );
    }

    #[test]
    fn the_words_of_a_stop() {
        let b = Budget {
            tree_tokens: Some(1000),
            tree_cost_usd: Some(1.0),
        };
        assert_eq!(
            b.stop_words(spent(1200, Some(0.5))),
            "budget: this tree used 1200 of 1000 tokens"
        );
        assert_eq!(
            b.stop_words(spent(10, Some(1.5))),
            "budget: this tree used $1.50 of $1.00"
        );
    }

    #[test]
    fn parse_names_the_field_at_fault() {
        let b = Budget::parse(&json!({"treeTokens": 5, "treeCostUsd": 1.5}), "budget").unwrap();
        assert_eq!(b.tree_tokens, Some(5));
        assert_eq!(b.tree_cost_usd, Some(1.5));
        for (v, field) in [
            (json!({"treeTokens": -1}), "budget.treeTokens"),
            (json!({"treeTokens": "5"}), "budget.treeTokens"),
            (json!({"treeCostUsd": -0.5}), "budget.treeCostUsd"),
            (json!({"tokens": 5}), "budget.tokens"),
            (json!(5), "budget"),
        ] {
            assert_eq!(Budget::parse(&v, "budget").unwrap_err().0, field, "{v}");
        }
    }

    /// SPEC 18: a record written before budgets has none (and writes none back); one with a
    /// budget reads it back whole, at rest too.
    #[test]
    fn a_record_without_a_budget_loads_unchanged_and_one_with_it_keeps_it() {
        let old = r#"{"id": "2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d", "provider": "claude",
            "cwd": "/w", "lastStatus": "idle", "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z", "title": "lead"}"#;
        let rec: crate::model::AgentRecord = serde_json::from_str(old).unwrap();
        assert!(rec.budget.is_none());
        let out = serde_json::to_value(&rec).unwrap();
        assert!(out.get("budget").is_none(), "{out}");
        let mut with = out.clone();
        with["budget"] = serde_json::json!({"treeTokens": 5000, "treeCostUsd": 1.25});
        let text = with.to_string();
        for rec in [
            *crate::model::AgentRecord::from_json_boxed(text.as_bytes()).unwrap(),
            *crate::model::AgentRecord::from_json_at_rest(text.as_bytes()).unwrap(),
        ] {
            let b = rec.budget.as_deref().copied().unwrap();
            assert_eq!((b.tree_tokens, b.tree_cost_usd), (Some(5000), Some(1.25)));
            assert!(rec.extra.is_empty(), "read as a field, not an unknown key");
            assert_eq!(
                serde_json::to_value(&rec).unwrap()["budget"],
                with["budget"]
            );
        }
    }
}
