//! Bearer tokens: who is calling the MCP server.
//!
//! Each agent session gets a fresh random token when it starts ([`AgentAccess::issue`]); the
//! previous one stops working at once, and archive revokes it. Agent tokens live only in memory,
//! so a restart invalidates every old one (resumed sessions get new ones). The user token is the
//! exception: it is created once in `$PASEO_HOME/mcp-token` (mode 0600) and kept across
//! restarts, so scripts can rely on it.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::model::AgentId;
use crate::providers::redact::{token_byte, Redact, REDACTED};
use crate::providers::McpAccess;
use crate::runtime::AgentAccess;
use crate::store::atomic::write_private;

/// Random bytes per token: 256 bits, well above the 128 the spec asks for.
const TOKEN_BYTES: usize = 32;

/// Who a request comes from, as its bearer token says (the runtime's policy decides what
/// each may do).
pub use crate::api::Caller;

/// A new random token, hex encoded.
pub fn new_token() -> io::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn plausible_token(s: &str) -> bool {
    s.len() >= 32 && s.len() <= 512 && s.bytes().all(|b| b.is_ascii_graphic())
}

/// Reads the user token from `path`, creating it (0600) when it is missing or unusable. An
/// existing file keeps its token; its mode is tightened to 0600 if something loosened it.
pub fn ensure_user_token(path: &Path) -> io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(s) => {
            let t = s.trim();
            if plausible_token(t) {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
                    if mode != 0o600 {
                        tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "the MCP user token file was not private; setting mode 0600");
                        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
                    }
                }
                return Ok(t.to_string());
            }
            tracing::warn!(path = %path.display(), "the MCP user token file holds no usable token; writing a new one");
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let token = new_token()?;
    write_private(path, format!("{token}\n").as_bytes())?;
    Ok(token)
}

/// Makes `dir` a private (0700) folder holding nothing: files left there by a session of an
/// earlier process (which crashed before removing them) carry tokens that are dead anyway, but
/// are still secrets on disk.
pub fn prepare_secrets_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // An existing folder keeps the mode it had; make sure no one else can list or enter it.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if let Err(error) = std::fs::remove_file(&path) {
            tracing::warn!(path = %path.display(), %error, "cannot remove a stale secrets file");
        }
    }
    Ok(())
}

#[derive(Default)]
struct Agents {
    by_token: HashMap<String, AgentId>,
    by_agent: HashMap<AgentId, String>,
}

/// The token registry: the user token and the live agent tokens. Cheap to query from the
/// runtime's actor (a short lock, no I/O).
pub struct Tokens {
    url: String,
    user: String,
    /// Where providers put per-session MCP configuration files (see [`McpAccess::config_dir`]).
    secrets_dir: PathBuf,
    /// The served tools' names, given to every agent with its token.
    tools: Arc<[String]>,
    agents: RwLock<Agents>,
}

impl Tokens {
    pub fn new(url: String, user: String, secrets_dir: PathBuf) -> Tokens {
        Tokens {
            url,
            user,
            secrets_dir,
            tools: super::tools::PaseoTools::served().into(),
            agents: RwLock::new(Agents::default()),
        }
    }

    /// Who `token` belongs to, if anyone.
    pub fn caller(&self, token: &str) -> Option<Caller> {
        if constant_time_eq(token.as_bytes(), self.user.as_bytes()) {
            return Some(Caller::User);
        }
        let agents = self.agents.read().unwrap_or_else(|e| e.into_inner());
        agents.by_token.get(token).map(|a| Caller::Agent(*a))
    }

    pub fn user_token(&self) -> &str {
        &self.user
    }
}

impl AgentAccess for Tokens {
    fn issue(&self, agent: AgentId) -> Option<McpAccess> {
        let token = match new_token() {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(%agent, "cannot make an MCP token: {e}; the agent runs without MCP");
                return None;
            }
        };
        let mut agents = self.agents.write().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = agents.by_agent.insert(agent, token.clone()) {
            agents.by_token.remove(&old);
        }
        agents.by_token.insert(token.clone(), agent);
        Some(McpAccess {
            url: self.url.clone(),
            token,
            config_dir: self.secrets_dir.clone(),
            tools: self.tools.clone(),
        })
    }

    fn revoke(&self, agent: AgentId) {
        let mut agents = self.agents.write().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = agents.by_agent.remove(&agent) {
            agents.by_token.remove(&old);
        }
    }

    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }
}

/// How long the agent tokens [`new_token`] makes are, in hex digits.
const TOKEN_HEX: usize = TOKEN_BYTES * 2;

impl Redact for Tokens {
    /// The user token is looked for as it is (the file may hold one the user chose); agent
    /// tokens, always hex of one length, among the runs of hex digits long enough to hold one,
    /// so the cost is one pass over the text however many agents run.
    fn redact(&self, text: &str) -> Option<String> {
        let mut out = None;
        if !self.user.is_empty() && text.contains(&self.user) {
            out = Some(text.replace(&self.user, REDACTED));
        }
        let cur = out.as_deref().unwrap_or(text);
        let bytes = cur.as_bytes();
        let agents = self.agents.read().unwrap_or_else(|e| e.into_inner());
        let mut spans = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if !token_byte(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && token_byte(bytes[i]) {
                i += 1;
            }
            let mut at = start;
            while at + TOKEN_HEX <= i {
                if agents.by_token.contains_key(&cur[at..at + TOKEN_HEX]) {
                    spans.push(at);
                    at += TOKEN_HEX;
                } else {
                    at += 1;
                }
            }
        }
        drop(agents);
        if spans.is_empty() {
            return out;
        }
        let mut clean = String::with_capacity(cur.len());
        let mut from = 0;
        for at in spans {
            clean.push_str(&cur[from..at]);
            clean.push_str(REDACTED);
            from = at + TOKEN_HEX;
        }
        clean.push_str(&cur[from..]);
        Some(clean)
    }
}

/// Compares without an early exit, so response timing says nothing about how much of a
/// guessed user token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_replaces_and_revoke_removes() {
        let t = Tokens::new(
            "http://127.0.0.1:1/mcp".into(),
            "u".repeat(64),
            PathBuf::from("/nonexistent"),
        );
        let a = AgentId::new();
        let first = t.issue(a).unwrap();
        assert_eq!(first.token.len(), 64);
        assert_eq!(t.caller(&first.token), Some(Caller::Agent(a)));
        let second = t.issue(a).unwrap();
        assert_ne!(first.token, second.token);
        assert_eq!(t.caller(&first.token), None);
        assert_eq!(t.caller(&second.token), Some(Caller::Agent(a)));
        t.revoke(a);
        assert_eq!(t.caller(&second.token), None);
        assert_eq!(t.caller(&"u".repeat(64)), Some(Caller::User));
        assert_eq!(t.caller(""), None);
    }

    /// SPEC 16: live tokens (any agent's, the user's) are replaced wherever they sit in a
    /// text; revoked ones and other hex are left alone.
    #[test]
    fn live_tokens_are_redacted_and_nothing_else() {
        let user = "u".repeat(40);
        let t = Tokens::new(
            "http://x/mcp".into(),
            user.clone(),
            PathBuf::from("/nonexistent"),
        );
        let (a, b) = (AgentId::new(), AgentId::new());
        let ta = t.issue(a).unwrap().token;
        let tb = t.issue(b).unwrap().token;
        let text = format!("A={ta}\nB=ff{tb}00\nU={user} x={}", "0".repeat(64));
        let clean = t.redact(&text).unwrap();
        assert_eq!(
            clean,
            format!(
                "A=[redacted]\nB=ff[redacted]00\nU=[redacted] x={}",
                "0".repeat(64)
            )
        );
        assert_eq!(t.redact("nothing here deadbeef"), None);
        t.revoke(a);
        assert_eq!(
            t.redact(&format!("old {ta}")),
            None,
            "a dead token is no secret"
        );
    }

    #[cfg(unix)]
    #[test]
    fn user_token_is_created_once_private_and_kept() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("mcp-token");
        let a = ensure_user_token(&p).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(ensure_user_token(&p).unwrap(), a);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(ensure_user_token(&p).unwrap(), a);
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::write(&p, "").unwrap();
        let b = ensure_user_token(&p).unwrap();
        assert_ne!(a, b);
        assert!(b.len() >= 64);
    }

    #[test]
    fn the_secrets_folder_is_private_and_emptied() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("secrets");
        prepare_secrets_dir(&dir).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("stale.json"), "{}").unwrap();
        prepare_secrets_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }
}
