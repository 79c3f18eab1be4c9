//! What kind of agent a provider runs: the one enum the configuration, the providers and the
//! power rule ([`super::power`]) match on. Written as its lowercase name wherever it is stored
//! or sent (`config.json` `providers.<id>.kind`, a provider's info).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Shell,
    Command,
    Claude,
    Codex,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::Shell,
        ProviderKind::Command,
        ProviderKind::Claude,
        ProviderKind::Codex,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderKind::Shell => "shell",
            ProviderKind::Command => "command",
            ProviderKind::Claude => "claude",
            ProviderKind::Codex => "codex",
        }
    }

    /// The kind named `s`; `None` for a name no kind has.
    pub fn parse(s: &str) -> Option<Self> {
        ProviderKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether its agents' sessions resume after a restart (the CLI keeps the conversation).
    pub fn resumes(&self) -> bool {
        matches!(self, ProviderKind::Claude | ProviderKind::Codex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_written_as_their_names_and_read_back() {
        for k in ProviderKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
            assert_eq!(ProviderKind::parse(k.as_str()), Some(k));
            let back: ProviderKind = serde_json::from_value(k.as_str().into()).unwrap();
            assert_eq!(back, k);
        }
        assert_eq!(ProviderKind::parse("Claude"), None);
        assert_eq!(ProviderKind::parse("test"), None);
    }
}
