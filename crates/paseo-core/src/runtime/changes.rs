//! What an agent changed on disk (the Changes view and `get_agent_changes`): the
//! actor says where the agent works, one read; git runs here, off the actor, on the workspace
//! the agent works in (a worktree against its base, anything else against HEAD).
//!
//! Reads follow SPEC 8 (any caller may read any agent). The actions (commit, merge, discard)
//! are the user's: the UI asks for them after a native confirm; agents have their own git.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::actor::Actor;
use super::blocking;
use super::checkout::{CheckoutAgent, HoldRequest};
use super::command::Command;
use super::internal::Internal;
use super::{RuntimeError, RuntimeHandle};
use crate::model::{AgentId, ChangeCounts, WorkspaceKind, WorkspaceRecord};
use crate::workspaces::changes::{
    self, ChangeSet, ChangesError, Compare, Discarded, FileDiff, Gh, GhStatus, Merged, Page,
    PullRequest,
};

/// An agent's changes: the files with their counts, and what they were compared with.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentChanges {
    pub agent_id: AgentId,
    /// `worktree`, `directory` or `local` (what the comparison means).
    pub workspace_kind: Option<WorkspaceKind>,
    /// The branch a merge goes into (worktrees whose base is a branch).
    pub base_branch: Option<String>,
    /// Every live agent working in this checkout (its work tree, `root`), this one included:
    /// Discard and Merge stop them all first (SPEC 15), and the confirm says so.
    pub checkout_agents: Vec<CheckoutAgent>,
    /// Where the base branch is checked out, when it is (a merge writes there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_checkout: Option<String>,
    /// The agents with a turn running in the base's checkout: a merge waits for them (SPEC 15:
    /// it never writes where another agent is at work), and the view says so before it asks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merge_blockers: Vec<CheckoutAgent>,
    #[serde(flatten)]
    pub changes: ChangeSet,
}

/// One file's diff in an agent's changes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDiff {
    pub agent_id: AgentId,
    #[serde(flatten)]
    pub diff: FileDiff,
}

/// Where the agent works and what its changes are compared with.
struct Target {
    dir: PathBuf,
    compare: Compare,
    kind: Option<WorkspaceKind>,
}

impl Target {
    fn of(cwd: String, ws: Option<WorkspaceRecord>) -> Target {
        let dir = PathBuf::from(&cwd);
        match ws {
            Some(ws) => Target {
                compare: changes::compare_for(&ws),
                kind: Some(ws.kind),
                dir,
            },
            None => Target {
                dir,
                compare: Compare::Head,
                kind: None,
            },
        }
    }

    fn base_branch(&self) -> Option<String> {
        match &self.compare {
            Compare::Base(b) => b.branch.clone(),
            Compare::Head => None,
        }
    }
}

/// The stable code of a Changes error at the command and MCP boundaries.
pub(super) fn code(e: &ChangesError) -> &'static str {
    match e {
        ChangesError::NotARepository { .. }
        | ChangesError::NotChanged { .. }
        | ChangesError::Invalid { .. } => "invalid",
        ChangesError::NoBase { .. } | ChangesError::BaseMissing { .. } => "not_found",
        ChangesError::NothingToCommit
        | ChangesError::Uncommitted { .. }
        | ChangesError::BaseCheckoutDirty { .. }
        | ChangesError::MergeConflict { .. }
        | ChangesError::WouldOverwrite { .. } => "conflict",
        ChangesError::CheckoutInUse { .. } => "busy",
        ChangesError::GhUnavailable { .. } => "unavailable",
        ChangesError::TooLarge { .. } => "limit",
        ChangesError::Busy { .. } => "busy",
        ChangesError::Git(_) | ChangesError::Io(_) => "io",
    }
}

impl RuntimeHandle {
    async fn target(&self, id: AgentId) -> Result<Target, RuntimeError> {
        let (cwd, ws) = self.ask(|reply| Command::Workplace { id, reply }).await?;
        blocking(move || Target::of(cwd, ws)).await
    }

    /// The agent's changed files with their counts.
    pub(crate) async fn agent_changes(&self, id: AgentId) -> Result<AgentChanges, RuntimeError> {
        let t = self.target(id).await?;
        let _turn = self.changes_gate.enter().await?;
        let mut found = blocking(move || {
            let set = changes::changes(&t.dir, &t.compare)?;
            Ok::<_, RuntimeError>(AgentChanges {
                agent_id: id,
                workspace_kind: t.kind,
                base_branch: t.base_branch(),
                checkout_agents: Vec::new(),
                base_checkout: None,
                merge_blockers: Vec::new(),
                changes: set,
            })
        })
        .await??;
        found.checkout_agents = self.agents_in(PathBuf::from(&found.changes.root)).await?;
        if let Some(base) = found.base_branch.clone() {
            let dir = PathBuf::from(&found.changes.root);
            let at = blocking(move || {
                crate::workspaces::gitcli::checked_out_at(&dir, &base)
                    .map(|at| at.map(|p| p.canonicalize().unwrap_or(p)))
                    .map_err(|e| RuntimeError::from(ChangesError::from(e)))
            })
            .await??;
            if let Some(at) = at {
                found.base_checkout = Some(at.display().to_string());
                found.merge_blockers = self
                    .agents_in(at)
                    .await?
                    .into_iter()
                    .filter(|a| a.working)
                    .collect();
            }
        }
        Ok(found)
    }

    /// The top of the work tree the agent's cwd is in (canonical, as git reports it).
    async fn checkout_of(&self, t: &Target) -> Result<PathBuf, RuntimeError> {
        let dir = t.dir.clone();
        blocking(move || {
            let top = crate::workspaces::gitcli::toplevel(&dir).map_err(ChangesError::from)?;
            let top = top.ok_or_else(|| ChangesError::NotARepository {
                path: dir.display().to_string(),
            })?;
            Ok(top.canonicalize().unwrap_or(top))
        })
        .await?
    }

    /// One changed file's diff, a page of lines at a time.
    pub(crate) async fn agent_diff(
        &self,
        id: AgentId,
        path: String,
        page: Page,
    ) -> Result<AgentDiff, RuntimeError> {
        let t = self.target(id).await?;
        let _turn = self.changes_gate.enter().await?;
        blocking(move || {
            let diff = changes::file_diff(&t.dir, &t.compare, &path, page)?;
            Ok(AgentDiff { agent_id: id, diff })
        })
        .await?
    }

    /// Commits everything in the agent's working tree; returns the commit.
    pub(crate) async fn commit_agent_changes(
        &self,
        id: AgentId,
        message: String,
    ) -> Result<String, RuntimeError> {
        let t = self.target(id).await?;
        let r = blocking(move || Ok(changes::commit_all(&t.dir, &message)?)).await?;
        self.recount(id).await;
        r
    }

    /// Merges a worktree agent's branch into the base it was made from.
    pub(crate) async fn merge_agent_changes(&self, id: AgentId) -> Result<Merged, RuntimeError> {
        let t = self.target(id).await?;
        let Some(base) = t.base_branch() else {
            return Err(RuntimeError::invalid(
                "agentId",
                "only an agent in a worktree branched off a branch can be merged into its base",
            ));
        };
        let top = self.checkout_of(&t).await?;
        let (dir, b) = (t.dir.clone(), base.clone());
        let base_at = blocking(move || {
            let at =
                crate::workspaces::gitcli::checked_out_at(&dir, &b).map_err(ChangesError::from)?;
            Ok::<_, RuntimeError>(at.map(|p| p.canonicalize().unwrap_or(p)))
        })
        .await??;
        // The branch's own checkout is stopped (its agents must not move the branch while it
        // is merged); the base's checkout, when another agent is at work there (a turn
        // running), refuses the merge: a merge writes into that agent's files, and stopping it
        // would end work the user did not ask about. Idle agents there are stopped too, so no
        // turn starts while git writes (SPEC 15).
        let hold = self
            .hold_checkouts(HoldRequest {
                stop: vec![top],
                guard: base_at.map(|at| (at, base.clone())),
            })
            .await?;
        // The hold goes when git is done, even if the caller stopped waiting meanwhile.
        let r = blocking(move || {
            let _hold = hold;
            Ok(changes::merge_into_base(&t.dir, &base)?)
        })
        .await?;
        self.recount(id).await;
        r
    }

    /// Discards the agent's uncommitted work after keeping it in a snapshot commit (SPEC 15).
    pub(crate) async fn discard_agent_changes(
        &self,
        id: AgentId,
        title: String,
    ) -> Result<Option<Discarded>, RuntimeError> {
        let t = self.target(id).await?;
        let message = format!("Paseo: work of {title} kept before it was discarded");
        // A discard resets the whole work tree, not one agent's files: in a checkout several
        // agents share, every one of them is stopped first, and the confirm the user answered
        // named them and said the whole repository goes back to HEAD (`checkoutAgents`). That
        // rather than a refusal: the Changes view of a shared checkout already lists every
        // file in it, so resetting that list is what the user asked for; their agents stay
        // resumable and the snapshot keeps every file, so nothing is lost (SPEC 15). Stopped
        // and held first, so nothing is written between the snapshot and the reset.
        let top = self.checkout_of(&t).await?;
        let hold = self
            .hold_checkouts(HoldRequest {
                stop: vec![top],
                guard: None,
            })
            .await?;
        // The hold goes when git is done, even if the caller stopped waiting meanwhile.
        let r = blocking(move || {
            let _hold = hold;
            Ok(changes::discard(&t.dir, &message)?)
        })
        .await?;
        self.recount(id).await;
        r
    }

    /// Whether a pull request can be opened for the agent's branch (`gh` installed and signed
    /// in), or why not.
    pub(crate) async fn pr_status(&self, id: AgentId) -> Result<GhStatus, RuntimeError> {
        let t = self.target(id).await?;
        blocking(move || Gh::default().status(&t.dir)).await
    }

    /// Pushes a worktree agent's branch and opens a pull request into its base with `gh`;
    /// answers the pull request's URL.
    pub(crate) async fn create_pr(
        &self,
        id: AgentId,
        title: String,
        body: String,
    ) -> Result<String, RuntimeError> {
        let t = self.target(id).await?;
        let Some(base) = t.base_branch() else {
            return Err(RuntimeError::invalid(
                "agentId",
                "only an agent in a worktree branched off a branch has a base to open a pull \
                 request into",
            ));
        };
        blocking(move || {
            let head = crate::workspaces::gitcli::current_branch(&t.dir)
                .map_err(ChangesError::from)?
                .ok_or_else(|| {
                    RuntimeError::invalid("agentId", "the worktree is not on a branch")
                })?;
            let pr = PullRequest {
                title,
                body,
                base,
                head,
                draft: false,
            };
            Ok(Gh::default().create_pr(&t.dir, &pr)?)
        })
        .await?
    }

    /// Opens the agent's folder, or one of its changed files, in the user's editor: `$VISUAL`
    /// (a GUI editor, e.g. `code -n`). Only a changed file can be named, so no caller can open
    /// anything else through this. Never a generic opener (`xdg-open`): the files are the
    /// agent's, and an opener picks the program by type (a `.desktop` file runs, an HTML page
    /// loads in a browser), so an agent could run something as the user with one click.
    pub(crate) async fn open_in_editor(
        &self,
        id: AgentId,
        path: Option<String>,
    ) -> Result<String, RuntimeError> {
        let t = self.target(id).await?;
        let _turn = self.changes_gate.enter().await?;
        blocking(move || {
            let target = match path {
                None => t.dir.clone(),
                Some(p) => {
                    let set = changes::changes(&t.dir, &t.compare)?;
                    let f = set
                        .files
                        .iter()
                        .find(|f| f.path == p)
                        .ok_or(ChangesError::NotChanged { path: p })?;
                    PathBuf::from(&set.root).join(&f.path)
                }
            };
            let (program, argv) = editor(std::env::var("VISUAL").ok().as_deref())?;
            let mut cmd = std::process::Command::new(&program);
            cmd.args(&argv)
                .arg(&target)
                .current_dir(&t.dir)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            let mut child = cmd.spawn().map_err(|e| {
                RuntimeError::invalid("editor", format!("cannot start {program}: {e}"))
            })?;
            // Reaped in the background: an editor may run for hours.
            std::thread::spawn(move || child.wait());
            Ok(program)
        })
        .await?
    }

    async fn recount(&self, id: AgentId) {
        let _ = self.ask(|reply| Command::CountChanges { id, reply }).await;
    }
}

/// The editor command from `$VISUAL`: its program and arguments. `$EDITOR` is not used: by
/// convention it names a terminal editor (vi, nano), and the app has no terminal to run it in.
pub(crate) fn editor(visual: Option<&str>) -> Result<(String, Vec<String>), RuntimeError> {
    let mut words = visual
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string);
    match words.next() {
        Some(program) => Ok((program, words.collect())),
        None => Err(RuntimeError::invalid(
            "editor",
            "set $VISUAL to your editor (a program that opens its own window, e.g. \
             \"code -n\" or \"gedit\") to open files from here; $EDITOR is not used, as it \
             needs a terminal",
        )),
    }
}

impl Actor {
    /// Counts what the agent changed, off the actor (git can be slow on a big tree); the count
    /// comes back as an internal message and shows in its track row and the workspace home.
    pub(super) fn count_changes(&mut self, agent: AgentId) {
        let Ok((cwd, ws)) = self.workplace(agent) else {
            return;
        };
        let tx = self.internal_tx.clone();
        let gate = self.changes_gate.clone();
        tokio::spawn(async move {
            // Counts wait their turn however long it takes: nobody waits on them.
            let Some(_turn) = gate.queue().await else {
                return;
            };
            let _ = tokio::task::spawn_blocking(move || {
                let t = Target::of(cwd, ws);
                // Not a git checkout (or git failing): no counts, rather than an error per turn.
                let counts = changes::changes(&t.dir, &t.compare)
                    .ok()
                    .map(|c| ChangeCounts {
                        files: c.totals.files as u64,
                        additions: c.totals.additions,
                        deletions: c.totals.deletions,
                    });
                let _ = tx.send(Internal::Counted { agent, counts });
            })
            .await;
        });
    }
}
