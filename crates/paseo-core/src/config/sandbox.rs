//! `"sandbox"` in config.json (SPEC 16): whether agents are contained, what they may not read,
//! and whether they reach the network. Parsed here with the rest of the file; the sandbox
//! itself is `crate::sandbox`.

use serde_json::Value;

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxConfig {
    /// `enabled`: false turns containment off for every agent (the user's choice; every agent
    /// then shows as unconfined).
    pub enabled: bool,
    /// `hide`: paths an agent cannot read: [`DEFAULT_HIDE`] and the user's own (the data root
    /// is always hidden too).
    pub hide: Vec<String>,
    /// `network`: false cuts agents off the network, loopback included (so from the app's MCP
    /// server too).
    pub network: bool,
    /// `engine`: what boxes agents; by default whichever works here, bubblewrap first.
    pub engine: EngineChoice,
}

/// `sandbox.engine`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

const FIELDS: &str = "enabled, hide, network or engine";

impl SandboxConfig {
    /// Reads the `sandbox` object; absent fields keep their defaults. On error: the field path
    /// and what was wrong.
    pub fn parse(value: &Value) -> Result<Self, (String, String)> {
        let object = value
            .as_object()
            .ok_or_else(|| ("sandbox".to_string(), "expected an object".to_string()))?;
        let mut config = SandboxConfig::default();
        for (key, value) in object {
            let path = format!("sandbox.{key}");
            let flag = || {
                value
                    .as_bool()
                    .ok_or_else(|| (path.clone(), "expected true or false".to_string()))
            };
            match key.as_str() {
                "enabled" => config.enabled = flag()?,
                "network" => config.network = flag()?,
                "engine" => {
                    config.engine = match value.as_str() {
                        Some("auto") => EngineChoice::Auto,
                        Some("bubblewrap") => EngineChoice::Bubblewrap,
                        Some("landlock") => EngineChoice::Landlock,
                        _ => {
                            return Err((
                                path,
                                "expected \"auto\", \"bubblewrap\" or \"landlock\"".into(),
                            ))
                        }
                    }
                }
                "hide" => {
                    let what = "expected an array of paths (absolute, or starting with ~/)";
                    let items = value
                        .as_array()
                        .ok_or_else(|| (path.clone(), what.to_string()))?;
                    let mut hide = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        let s = item
                            .as_str()
                            .filter(|s| s.starts_with('/') || s.starts_with("~/"))
                            .filter(|s| !s.contains('\0'))
                            .ok_or_else(|| (format!("{path}[{i}]"), what.to_string()))?;
                        hide.push(s.to_string());
                    }
                    // Added to the defaults: a list that left one out must not expose it.
                    for h in hide {
                        if !config.hide.contains(&h) {
                            config.hide.push(h);
                        }
                    }
                }
                _ => return Err((path, format!("unknown field (expected {FIELDS})"))),
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let c = SandboxConfig::parse(&serde_json::json!({})).unwrap();
        assert_eq!(c, SandboxConfig::default());
        assert!(c.enabled && c.network);
        assert!(c.hide.iter().any(|h| h == "~/.ssh"));
        let c = SandboxConfig::parse(&serde_json::json!({
            "enabled": false, "network": false, "hide": ["~/.secret", "/srv/keys"]
        }))
        .unwrap();
        assert!(!c.enabled && !c.network);
        // Added to the defaults, never in their place.
        assert_eq!(&c.hide[DEFAULT_HIDE.len()..], ["~/.secret", "/srv/keys"]);
        assert!(c.hide.iter().any(|h| h == "~/.ssh"));
        assert_eq!(c.engine, EngineChoice::Auto);
        let c = SandboxConfig::parse(&serde_json::json!({"engine": "landlock"})).unwrap();
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
            let (path, _) = SandboxConfig::parse(&v).unwrap_err();
            assert_eq!(path, want, "{v}");
        }
    }
}
