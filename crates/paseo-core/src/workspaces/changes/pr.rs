//! Pull requests through the `gh` CLI, when it is installed and signed in.

use std::path::{Path, PathBuf};

use super::read::top;
use super::*;
use crate::workspaces::gitcli::{self, Cmd, GitError};
use crate::workspaces::worktree::validate_branch;

// ---------------------------------------------------------------------- pull requests

/// Whether pull requests can be opened from the app.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum GhStatus {
    Ready,
    Unavailable { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequest {
    pub title: String,
    #[serde(default)]
    pub body: String,
    /// The branch to merge into (the worktree's base).
    pub base: String,
    /// The branch with the work (pushed first).
    pub head: String,
    #[serde(default)]
    pub draft: bool,
}

/// The two commands a pull request takes: push the branch, then `gh pr create`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrCommands {
    pub push: Vec<String>,
    pub create: Vec<String>,
}

/// The GitHub CLI.
#[derive(Clone, Debug)]
pub struct Gh {
    program: PathBuf,
}

impl Default for Gh {
    fn default() -> Self {
        Gh {
            program: PathBuf::from("gh"),
        }
    }
}

impl Gh {
    /// `gh` at another place (tests, or a configured path).
    pub fn with_program(program: impl Into<PathBuf>) -> Gh {
        Gh {
            program: program.into(),
        }
    }

    fn cmd(&self, dir: &Path) -> Cmd {
        Cmd::program(&self.program, dir)
    }

    /// Installed and signed in (`gh auth status`), or why not.
    pub fn status(&self, dir: &Path) -> GhStatus {
        let o = self
            .cmd(dir)
            .args(["auth", "status"])
            .timeout(Duration::from_secs(30))
            .output();
        match o {
            Ok(o) if o.success => GhStatus::Ready,
            Ok(o) => GhStatus::Unavailable {
                reason: format!("gh is not signed in to GitHub: {}", o.message()),
            },
            Err(GitError::Missing { .. }) => GhStatus::Unavailable {
                reason: "the GitHub CLI (gh) is not installed".into(),
            },
            Err(e) => GhStatus::Unavailable {
                reason: e.to_string(),
            },
        }
    }

    /// What [`Gh::create_pr`] runs, checked: the push of `head` to its remote (its upstream's,
    /// else `origin`) and `gh pr create` with every value in `--flag=value` form, so no title
    /// or branch can read as an option.
    pub fn pr_commands(&self, dir: &Path, pr: &PullRequest) -> Result<PrCommands, ChangesError> {
        let top = top(dir)?;
        if pr.title.trim().is_empty() || pr.title.contains(['\n', '\0']) {
            return Err(ChangesError::Invalid {
                field: "title".into(),
                message: "must be one non-empty line".into(),
            });
        }
        if pr.body.contains('\0') || pr.body.len() > MAX_MESSAGE_BYTES {
            return Err(ChangesError::Invalid {
                field: "body".into(),
                message: format!("must be text of at most {MAX_MESSAGE_BYTES} bytes"),
            });
        }
        validate_branch("base", &pr.base)?;
        validate_branch("head", &pr.head)?;
        if !gitcli::branch_exists(&top, &pr.head)? {
            return Err(ChangesError::Invalid {
                field: "head".into(),
                message: format!("branch {:?} does not exist", pr.head),
            });
        }
        let remote = Cmd::git(&top)
            .args(["config", "--get", &format!("branch.{}.remote", pr.head)])
            .query()?
            .filter(|r| !r.is_empty() && !r.starts_with('-') && r != ".")
            .unwrap_or_else(|| "origin".into());
        if Cmd::git(&top)
            .args(["remote", "get-url", &remote])
            .query()?
            .is_none()
        {
            return Err(ChangesError::Invalid {
                field: "head".into(),
                message: format!("the repository has no remote {remote:?} to push the branch to"),
            });
        }
        let refspec = format!("refs/heads/{0}:refs/heads/{0}", pr.head);
        let push = Cmd::git(&top)
            .args(["push", "--set-upstream", &remote, &refspec])
            .argv();
        let mut create = self
            .cmd(&top)
            .args(["pr", "create"])
            .arg(format!("--base={}", pr.base))
            .arg(format!("--head={}", pr.head))
            .arg(format!("--title={}", pr.title))
            .arg(format!("--body={}", pr.body));
        if pr.draft {
            create = create.arg("--draft");
        }
        Ok(PrCommands {
            push,
            create: create.argv(),
        })
    }

    /// Pushes the branch and opens the pull request; returns what gh printed (its URL).
    /// Unavailable (with the reason) when gh is missing or not signed in.
    ///
    /// Both run outside any box (the push needs the user's credentials and network), so
    /// nothing of the repository's own config, which an agent may have written, may name a
    /// program for them (SPEC 16b): a repository whose config sets anything but the plain keys
    /// ([`SAFE_LOCAL_KEYS`]) is refused with the keys named, the push goes to the remote's URL
    /// checked to be a network one, and both run with the settings that could run a program
    /// pinned to the user's own (`GIT_CONFIG_COUNT`), whatever the repository says meanwhile.
    pub fn create_pr(&self, dir: &Path, pr: &PullRequest) -> Result<String, ChangesError> {
        let plan = self.pr_commands(dir, pr)?;
        if let GhStatus::Unavailable { reason } = self.status(dir) {
            return Err(ChangesError::GhUnavailable { reason });
        }
        let top = top(dir)?;
        let planted = planted_keys(&top)?;
        if !planted.is_empty() {
            return Err(ChangesError::Invalid {
                field: "repository".into(),
                message: format!(
                    "the repository's own git config sets {} that could run a program when the \
                     app pushes as you ({}); an agent may have written {}. Look at them with \
                     `git config --local --list`, remove them, then try again",
                    if planted.len() == 1 { "a key" } else { "keys" },
                    planted.join(", "),
                    if planted.len() == 1 { "it" } else { "them" }
                ),
            });
        }
        // `push --set-upstream <remote> <refspec>`: the remote's URL, checked, in its place.
        let remote = plan.push.get(5).cloned().unwrap_or_default();
        let url = Cmd::git(&top)
            .args(["remote", "get-url", "--push", &remote])
            .run()?;
        let url = url.trim().to_string();
        if !network_url(&url) {
            return Err(ChangesError::Invalid {
                field: "repository".into(),
                message: format!(
                    "the remote {remote:?} pushes to {url:?}, which is not a network address \
                     (https://, ssh:// or user@host:path); the app pushes only there"
                ),
            });
        }
        let refspec = format!("refs/heads/{0}:refs/heads/{0}", pr.head);
        let pinned = pinned_env(&top)?;
        Cmd::git(&top)
            .args(["push", &url, &refspec])
            .unboxed()
            .envs(&pinned)
            .timeout(Duration::from_secs(300))
            .run()?;
        // The upstream, as `--set-upstream <remote>` would have written it.
        Cmd::git(&top)
            .args([
                "branch",
                &format!("--set-upstream-to={remote}/{}", pr.head),
                &pr.head,
            ])
            .query()?;
        let out = Cmd::program(&self.program, &top)
            .args(&plan.create[1..])
            .envs(&pinned)
            .timeout(Duration::from_secs(300))
            .run()?;
        Ok(out.trim().to_string())
    }
}

/// The keys of a repository's own config (lower case, `<r>` and `<b>` any remote or branch)
/// that name no program: what a push reads of it. Anything else there (an `include`, a
/// `core.sshCommand`, a `credential.helper`, a `url.*.insteadOf`, a `remote.*.receivepack`,
/// a `gpg.program`…) stops "Create pull request" until the user has looked.
pub const SAFE_LOCAL_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotepath",
    "core.worktree",
    "extensions.objectformat",
    "extensions.worktreeconfig",
    "extensions.refstorage",
    "remote.<r>.url",
    "remote.<r>.pushurl",
    "remote.<r>.fetch",
    "remote.<r>.tagopt",
    "remote.<r>.prune",
    "branch.<b>.remote",
    "branch.<b>.merge",
    "branch.<b>.rebase",
    "user.name",
    "user.email",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "fetch.prune",
];

/// The keys of `top`'s own config (local and worktree scopes) that are not plain.
fn planted_keys(top: &Path) -> Result<Vec<String>, ChangesError> {
    let out = Cmd::git(top)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["config", "--list", "--show-scope", "--name-only", "-z"])
        .run_raw()?;
    let mut found: Vec<String> = Vec::new();
    // With -z: the scope, then the name, each ended by a NUL.
    let fields: Vec<String> = out
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    for pair in fields.chunks(2) {
        let [scope, name] = pair else {
            continue;
        };
        if !matches!(scope.as_str(), "local" | "worktree") {
            continue;
        }
        let name = name.trim().to_ascii_lowercase();
        if !safe_key(&name) && !found.contains(&name) {
            found.push(name);
        }
    }
    Ok(found)
}

fn safe_key(name: &str) -> bool {
    let generic = match name.split_once('.') {
        Some((section @ ("remote" | "branch"), rest)) => match rest.rsplit_once('.') {
            Some((_, key)) => format!(
                "{section}.{}.{key}",
                if section == "remote" { "<r>" } else { "<b>" }
            ),
            None => name.to_string(),
        },
        _ => name.to_string(),
    };
    SAFE_LOCAL_KEYS.contains(&generic.as_str())
}

/// A URL the app pushes to: https, ssh, or scp-like `user@host:path`; never a local path,
/// `file://`, `ext::` or anything that reads as an option.
fn network_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    if url.starts_with('-') || url.contains("::") || url.chars().any(char::is_control) {
        return false;
    }
    if lower.starts_with("https://")
        || lower.starts_with("ssh://")
        || lower.starts_with("git+ssh://")
    {
        return true;
    }
    // scp-like: `[user@]host:path`, the host before the first colon, no slash in it.
    match url.split_once(':') {
        Some((host, path)) => {
            !host.is_empty() && !host.contains('/') && !path.is_empty() && !lower.contains("://")
        }
        None => false,
    }
}

/// The settings a push or gh may not take from the repository, pinned to the user's own (their
/// global and system config, read without the repository's): the ssh command, the askpass,
/// the proxy, the credential helpers, and no `ext::` or local-path transport; hooks and
/// fsmonitor off.
fn pinned_env(top: &Path) -> Result<Vec<(String, String)>, ChangesError> {
    let users = |key: &str| -> Result<Vec<String>, ChangesError> {
        let out = Cmd::program("git", top)
            .args(["config", "--global", "--get-all", key])
            .output()?;
        let mut v: Vec<String> = if out.success {
            out.text().lines().map(str::to_string).collect()
        } else {
            Vec::new()
        };
        let sys = Cmd::program("git", top)
            .args(["config", "--system", "--get-all", key])
            .output()?;
        if sys.success {
            let mut s: Vec<String> = sys.text().lines().map(str::to_string).collect();
            s.append(&mut v);
            v = s;
        }
        Ok(v)
    };
    let mut pins: Vec<(String, String)> = vec![
        ("core.hooksPath".into(), "/dev/null".into()),
        ("core.fsmonitor".into(), "false".into()),
        ("protocol.ext.allow".into(), "never".into()),
        ("protocol.file.allow".into(), "never".into()),
    ];
    let one = |key: &str, default: &str| -> Result<(String, String), ChangesError> {
        Ok((
            key.to_string(),
            users(key)?.pop().unwrap_or_else(|| default.to_string()),
        ))
    };
    pins.push(one("core.sshCommand", "ssh")?);
    pins.push(one("core.askPass", "")?);
    pins.push(one("core.gitProxy", "")?);
    // An empty helper resets the list: then the user's own, in their order.
    pins.push(("credential.helper".into(), String::new()));
    for h in users("credential.helper")? {
        pins.push(("credential.helper".into(), h));
    }
    let mut env = vec![("GIT_CONFIG_COUNT".to_string(), pins.len().to_string())];
    for (i, (k, v)) in pins.into_iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v));
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_network_urls_are_pushed_to() {
        for ok in [
            "https://github.com/me/app.git",
            "ssh://git@github.com/me/app.git",
            "git@github.com:me/app.git",
        ] {
            assert!(network_url(ok), "{ok}");
        }
        for bad in [
            "/srv/repo.git",
            "../other",
            "file:///srv/repo.git",
            "ext::sh -c touch% /tmp/x",
            "-uhttps://x",
            "./x:y",
        ] {
            assert!(!network_url(bad), "{bad}");
        }
    }

    #[test]
    fn plain_keys_are_safe_and_program_keys_are_not() {
        for ok in [
            "remote.origin.url",
            "remote.my.fork.url",
            "branch.feat/x.merge",
            "core.bare",
            "user.email",
        ] {
            assert!(safe_key(ok), "{ok}");
        }
        for bad in [
            "core.sshcommand",
            "remote.origin.receivepack",
            "credential.helper",
            "include.path",
            "url.ext::sh.insteadof",
            "core.fsmonitor",
            "gpg.program",
            "core.askpass",
        ] {
            assert!(!safe_key(bad), "{bad}");
        }
    }
}
