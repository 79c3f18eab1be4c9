//! `"sandbox"` in config.json (SPEC 16): whether agents are contained, what they may not read,
//! and whether they reach the network. Parsed here with the rest of the file; the sandbox
//! itself is `crate::sandbox`.

use serde::{Deserialize, Deserializer};

/// The user's secrets an agent never reads, as paths under the home directory (`~/` prefix)
/// or absolute paths (SPEC 16, 16b). `sandbox.hide` adds to them; it cannot take one away.
pub const DEFAULT_HIDE: [&str; 26] = [
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.config/gh",
    "~/.netrc",
    "~/.docker/config.json",
    "~/.kube",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials.toml",
    "~/.cargo/credentials",
    "~/.gem/credentials",
    "~/.config/gcloud",
    "~/.azure",
    "~/.config/containers/auth.json",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    // git's credential cache listens here (`git credential-cache`).
    "~/.cache/git",
    // The default data root, whichever data root this one is (a moved or second one).
    "~/.paseo",
];

/// How agents are contained.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// `enabled`: false turns containment off for every agent (the user's choice; every agent
    /// then shows as unconfined).
    pub enabled: bool,
    /// `hide`: paths an agent cannot read: [`DEFAULT_HIDE`] and the user's own (the data root
    /// is always hidden too).
    #[serde(deserialize_with = "hide")]
    pub hide: Vec<String>,
    /// `network`: false cuts agents off the network, loopback included (so from the app's MCP
    /// server too).
    pub network: bool,
    /// `engine`: what boxes agents; by default whichever works here, bubblewrap first.
    #[serde(deserialize_with = "super::read::name")]
    pub engine: EngineChoice,
}

/// `sandbox.engine`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// bubblewrap where it works, else Landlock.
    #[default]
    Auto,
    Bubblewrap,
    Landlock,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            enabled: true,
            hide: DEFAULT_HIDE.iter().map(|s| s.to_string()).collect(),
            network: true,
            engine: EngineChoice::Auto,
        }
    }
}

/// `hide` adds to [`DEFAULT_HIDE`]: a list that left one out must not expose it.
fn hide<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let mut hide = SandboxConfig::default().hide;
    for HidePath(path) in Vec::<HidePath>::deserialize(d)? {
        if !hide.contains(&path) {
            hide.push(path);
        }
    }
    Ok(hide)
}

/// A path in `sandbox.hide`: absolute, or under the home directory.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct HidePath(String);

impl TryFrom<String> for HidePath {
    type Error = &'static str;

    fn try_from(path: String) -> Result<Self, Self::Error> {
        let rooted = path.starts_with('/') || path.starts_with("~/");
        (rooted && !path.contains('\0'))
            .then_some(HidePath(path))
            .ok_or("expected an array of paths (absolute, or starting with ~/)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::section;

    fn parse(sandbox: serde_json::Value) -> Result<SandboxConfig, String> {
        section("sandbox", sandbox).map(|c| c.sandbox)
    }

    #[test]
    fn defaults_and_overrides() {
        let c = parse(serde_json::json!({})).unwrap();
        assert_eq!(c, SandboxConfig::default());
        assert!(c.enabled && c.network);
        assert!(c.hide.iter().any(|h| h == "~/.ssh"));
        let c = parse(serde_json::json!({
            "enabled": false, "network": false, "hide": ["~/.secret", "/srv/keys"]
        }))
        .unwrap();
        assert!(!c.enabled && !c.network);
        // Added to the defaults, never in their place.
        assert_eq!(&c.hide[DEFAULT_HIDE.len()..], ["~/.secret", "/srv/keys"]);
        assert!(c.hide.iter().any(|h| h == "~/.ssh"));
        assert_eq!(c.engine, EngineChoice::Auto);
        let c = parse(serde_json::json!({"engine": "landlock"})).unwrap();
        assert_eq!(c.engine, EngineChoice::Landlock);
    }

    #[test]
    fn bad_values_name_their_path() {
        let cases = [
            (serde_json::json!(3), "sandbox"),
            (serde_json::json!({"enabled": "no"}), "sandbox.enabled"),
            (serde_json::json!({"hide": "~/.ssh"}), "sandbox.hide"),
            (serde_json::json!({"hide": ["relative"]}), "sandbox.hide[0]"),
            (serde_json::json!({"colour": 1}), "sandbox.colour"),
            (serde_json::json!({"engine": "docker"}), "sandbox.engine"),
        ];
        for (v, want) in cases {
            let path = parse(v.clone()).unwrap_err();
            assert_eq!(path, want, "{v}");
        }
    }
}
