//! Usage and cost (what SPEC 18's budgets count): what each turn of a model agent consumed, as its
//! CLI reports it, summed in the agent's record; and what the last turn of a shell or command agent
//! took.
//!
//! Costs are only ever the CLI's own figures (Claude Code's `total_cost_usd`); a provider that
//! reports none (Codex) has tokens only. Nothing here knows a price.

use serde::{Deserialize, Serialize};

use super::ids::Extra;

/// An agent's summed usage (the record's `usage`), or a roll-up of several agents'.
///
/// `inputTokens` counts input not read from the prompt cache; cache reads and writes are
/// counted apart, as Claude reports them (Codex's `inputTokens` includes its cached input, which
/// is moved to `cacheReadTokens`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// USD, summed over the turns whose CLI reported a cost; absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Turns that reported usage.
    #[serde(default)]
    pub turns: u64,
    /// The CLI's cumulative cost of its session as it last reported it. Claude Code restores
    /// this total when a session is resumed in a new process, so the first turn of that process
    /// costs its report minus this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_cost_usd: Option<f64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// An agent's own usage in its record: boxed, so the many agents that never reported any
/// (every shell and command agent) hold a null pointer instead of 80 bytes (docs/scale.md).
/// Reads and writes go through the [`Usage`] it derefs to; it reads and writes
/// as that `Usage`.
#[derive(Clone, Default)]
pub struct RecordUsage(Option<Box<Usage>>);

static NO_USAGE: std::sync::LazyLock<Usage> = std::sync::LazyLock::new(Usage::default);

impl RecordUsage {
    pub fn is_empty(&self) -> bool {
        (**self).is_empty()
    }
}

impl From<Usage> for RecordUsage {
    fn from(u: Usage) -> RecordUsage {
        RecordUsage((u != Usage::default()).then(|| Box::new(u)))
    }
}

impl std::ops::Deref for RecordUsage {
    type Target = Usage;
    fn deref(&self) -> &Usage {
        self.0.as_deref().unwrap_or(&NO_USAGE)
    }
}

impl std::ops::DerefMut for RecordUsage {
    fn deref_mut(&mut self) -> &mut Usage {
        self.0.get_or_insert_with(Default::default)
    }
}

/// Equal when the sums are (one never filled equals an all-zero one).
impl PartialEq for RecordUsage {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for RecordUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for RecordUsage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for RecordUsage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Usage::deserialize(d).map(RecordUsage::from)
    }
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        self.turns == 0 && self.cost_usd.is_none() && self.extra.is_empty()
    }

    /// Adds one turn's report.
    pub fn add_turn(&mut self, t: &TurnUsage) {
        self.input_tokens = self.input_tokens.saturating_add(t.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(t.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(t.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(t.cache_write_tokens);
        self.turns += 1;
        let cost = match (t.cost_usd, t.session_cost_usd) {
            (_, Some(total)) if t.restored => {
                Some((total - self.session_cost_usd.unwrap_or(0.0)).max(0.0))
            }
            (cost, _) => cost,
        };
        if let Some(c) = cost.filter(|c| c.is_finite() && *c >= 0.0) {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
        if let Some(total) = t.session_cost_usd.filter(|c| c.is_finite()) {
            self.session_cost_usd = Some(total);
        }
    }

    /// Adds another agent's sums (a roll-up; the session figure is not summed).
    pub fn add(&mut self, o: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(o.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(o.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(o.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(o.cache_write_tokens);
        self.turns = self.turns.saturating_add(o.turns);
        if let Some(c) = o.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}

/// What one turn consumed, as the provider reports it with the turn's end.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// This turn's cost, when the CLI reports costs and it is known.
    pub cost_usd: Option<f64>,
    /// The CLI's cumulative cost of its session after this turn.
    pub session_cost_usd: Option<f64>,
    /// The CLI's cumulative cost includes a total restored from an earlier process: the turn's
    /// cost is `session_cost_usd` minus the session cost recorded before.
    pub restored: bool,
}

/// The last turn of a shell or command agent: how long its process ran and how it exited.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastRun {
    #[serde(default)]
    pub wall_ms: u64,
    /// None when the process was ended by a signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_record_usage_holds_nothing_until_a_turn_reports_and_reads_and_writes_as_usage() {
        let mut r = RecordUsage::default();
        assert!(r.0.is_none() && r.is_empty());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::to_value(Usage::default()).unwrap()
        );
        let none: RecordUsage = serde_json::from_str("{}").unwrap();
        assert!(none.0.is_none(), "an all-zero usage read holds nothing");
        r.add_turn(&TurnUsage {
            input_tokens: 7,
            cost_usd: Some(0.25),
            ..Default::default()
        });
        assert!(r.0.is_some() && !r.is_empty());
        let json = serde_json::to_string(&r).unwrap();
        let back: RecordUsage = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        assert_eq!(
            (back.input_tokens, back.turns, back.cost_usd),
            (7, 1, Some(0.25))
        );
        assert_eq!(RecordUsage::from(Usage::default()), RecordUsage::default());
    }

    use super::*;

    fn turn(input: u64, cost: Option<f64>, session: Option<f64>, restored: bool) -> TurnUsage {
        TurnUsage {
            input_tokens: input,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
            cost_usd: cost,
            session_cost_usd: session,
            restored,
        }
    }

    #[test]
    fn turns_sum_and_a_restored_session_total_counts_only_the_new_part() {
        let mut u = Usage::default();
        u.add_turn(&turn(10, Some(0.5), Some(0.5), false));
        u.add_turn(&turn(20, Some(0.25), Some(0.75), false));
        // A new process resumed the session: the CLI reports 0.75 restored + 0.5 new.
        u.add_turn(&turn(5, None, Some(1.25), true));
        assert_eq!(
            (
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens
            ),
            (35, 6, 9, 12)
        );
        assert_eq!(u.turns, 3);
        assert_eq!(u.cost_usd, Some(1.25));
        assert_eq!(u.session_cost_usd, Some(1.25));
    }

    #[test]
    fn tokens_without_cost_stay_without_cost_and_bad_costs_are_ignored() {
        let mut u = Usage::default();
        u.add_turn(&turn(10, None, None, false));
        assert_eq!(u.cost_usd, None);
        u.add_turn(&turn(1, Some(f64::NAN), None, false));
        u.add_turn(&turn(1, Some(-3.0), None, false));
        assert_eq!(u.cost_usd, None);
        assert_eq!(u.turns, 3);
    }

    #[test]
    fn usage_round_trips_with_unknown_fields() {
        let v = serde_json::json!({"inputTokens": 1, "outputTokens": 2, "costUsd": 0.5,
            "turns": 1, "futureTokens": 9});
        let u: Usage = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(u.extra["futureTokens"], 9);
        let out = serde_json::to_value(&u).unwrap();
        assert_eq!(out["futureTokens"], 9);
        assert_eq!(out["costUsd"], 0.5);
        assert_eq!(out["cacheReadTokens"], 0);
    }
}
