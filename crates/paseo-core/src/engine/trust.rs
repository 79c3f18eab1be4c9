//! What the engine knows of the providers and of containment for the power rule (SPEC 14,
//! 16): each agent's power and whether it is contained, from the configuration the runtime
//! gave it at start.

use std::collections::BTreeMap;

use super::{AgentState, Engine};
use crate::model::{AgentConfig, Power, ProviderTrust};

impl Engine {
    /// Tells the engine what the power rule reads of each provider (by provider id), for
    /// [`Engine::power_of`], and whether containment is on ([`Engine::contained`]).
    pub fn set_providers(&mut self, providers: BTreeMap<String, ProviderTrust>, sandbox: bool) {
        self.providers = providers
            .into_iter()
            .map(|(id, p)| (id, p.reduced()))
            .collect();
        self.sandbox_enabled = sandbox;
    }

    /// What the power rule reads of provider `id`; a provider the configuration does not define
    /// has an unknown kind, so `full` power: nothing unknown is trusted to ask.
    pub fn provider_trust(&self, id: &str) -> ProviderTrust {
        self.providers.get(id).cloned().unwrap_or_default()
    }

    /// The power of an agent of provider `provider` with `config` (SPEC 14).
    pub fn power_for(&self, provider: &str, config: &AgentConfig) -> Power {
        match self.providers.get(provider) {
            Some(p) => crate::model::power(p, config),
            None => crate::model::power(&ProviderTrust::default(), config),
        }
    }

    /// An agent's power (SPEC 14): by its provider and its mode.
    pub fn power_of(&self, a: &AgentState) -> Power {
        self.power_for(&a.record.provider, &a.record.config)
    }

    /// Whether an agent of `provider` that the user did (not) make `unconfined` runs contained
    /// (SPEC 16): unless containment is off, or the agent or its provider is unconfined.
    pub fn contained_as(&self, provider: &str, unconfined: bool) -> bool {
        self.sandbox_enabled
            && !unconfined
            && !self.providers.get(provider).is_some_and(|p| p.unconfined)
    }

    pub fn contained(&self, a: &AgentState) -> bool {
        self.contained_as(&a.record.provider, a.record.config.unconfined)
    }
}
