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
    pub fn create_pr(&self, dir: &Path, pr: &PullRequest) -> Result<String, ChangesError> {
        let plan = self.pr_commands(dir, pr)?;
        if let GhStatus::Unavailable { reason } = self.status(dir) {
            return Err(ChangesError::GhUnavailable { reason });
        }
        let top = top(dir)?;
        let run = |argv: &[String], program: &Path| {
            Cmd::program(program, &top)
                .args(&argv[1..])
                .timeout(Duration::from_secs(300))
                .run()
        };
        // The push as shown (`git -C <top> push …`), run as git: hooks and the repository's own
        // drivers off; outside the box, which would hide the user's credentials (SPEC 16).
        let push_args = plan.push.get(3..).unwrap_or_default();
        Cmd::git(&top)
            .args(push_args)
            .unboxed()
            .timeout(Duration::from_secs(300))
            .run()?;
        Ok(run(&plan.create, &self.program)?.trim().to_string())
    }
}
