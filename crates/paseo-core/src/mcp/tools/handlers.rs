//! The tools' bodies: input → one runtime request for the caller → output and summary.

use super::output::{
    excerpt, ok, rt_err, tail, ArchiveOutput, CancelOutput, CreatedOutput, ListEntry, ListOutput,
    PromptOutput, ToolResult, WaitOutput, WorktreeOutput,
};
use super::{PaseoTools, FOREGROUND_WAIT, LAST_MESSAGE_CHARS};
use crate::api::{verbs, Caller, Request, Response};
use crate::mcp::input::{
    AgentInput, ChangesInput, CreateAgentInput, CreateWorktreeInput, FieldError, ListInput,
    Relationship, SendPromptInput, SourceInput, WaitInput, WorkspaceInput, DEFAULT_LIST_LIMIT,
    DEFAULT_WAIT_SECONDS,
};
use crate::model::{HeldTurn, HoldReason};
use crate::runtime::{AgentSnapshot, CurrentWorkspace, WorkspaceTarget};

/// What a caller is told when its turn waits for the user (SPEC 14): that it does, and why.
fn held(turn: &HeldTurn) -> String {
    let why: Vec<&str> = turn
        .reasons()
        .iter()
        .map(|r| match r {
            HoldReason::WiderMode => "that agent acts without asking and you ask first",
            HoldReason::OutsideReach { .. } => {
                "that agent works outside the directory you may write"
            }
            HoldReason::Unconfined => "that agent runs unconfined and you run in the sandbox",
        })
        .collect();
    format!(
        " The turn is held: {}, so it runs only once the user allows it (a denial ends it with \
         an error).",
        why.join("; ")
    )
}

/// What `get_agent` says of the tree's budget (SPEC 18): used and left, in tokens and USD.
fn budget_words(b: &crate::model::TreeBudget) -> String {
    let mut parts = Vec::new();
    if let (Some(cap), Some(left)) = (b.budget.tree_tokens, b.left.tree_tokens) {
        parts.push(format!(
            "{} of {cap} tokens used, {left} left",
            b.used.tokens
        ));
    }
    if let (Some(cap), Some(left)) = (b.budget.tree_cost_usd, b.left.tree_cost_usd) {
        let used = b.used.cost_usd.unwrap_or(0.0);
        parts.push(format!("${used:.2} of ${cap:.2} used, ${left:.2} left"));
    }
    let mut s = format!("; budget: {}", parts.join("; "));
    if b.reached {
        s.push_str(" (used up: agents' next turns wait for the user)");
    }
    s
}

/// A response of a kind the request never answers: a bug in the dispatch, not the caller's.
fn unexpected() -> FieldError {
    FieldError::new(
        "",
        "the runtime answered with an unexpected kind of response",
    )
}

/// What a wait request found.
struct Waited {
    agent: Box<AgentSnapshot>,
    timed_out: bool,
}

impl PaseoTools {
    /// One request through the API for `caller`; a refusal names `field` unless the runtime
    /// named one.
    async fn ask(
        &self,
        caller: Caller,
        request: Request,
        field: &str,
    ) -> Result<Response, FieldError> {
        self.rt
            .call(caller, request)
            .await
            .map_err(|e| rt_err(e, field))
    }

    async fn waited(&self, caller: Caller, wait: Request) -> Result<Waited, FieldError> {
        match self.ask(caller, wait, "agentId").await? {
            Response::Waited { agent, timed_out } => Ok(Waited { agent, timed_out }),
            _ => Err(unexpected()),
        }
    }

    pub(super) async fn do_create_agent(
        &self,
        caller: Caller,
        input: CreateAgentInput,
    ) -> ToolResult {
        let workspace = match input.workspace {
            WorkspaceInput::Current(c) => WorkspaceTarget::Current(CurrentWorkspace { cwd: c.cwd }),
            WorkspaceInput::Existing(e) => WorkspaceTarget::existing(e.workspace_id),
            WorkspaceInput::Create(c) => match c.source {
                SourceInput::Directory(d) => WorkspaceTarget::directory(d.path),
                SourceInput::Worktree(w) => WorkspaceTarget::worktree(w.repo, w.target),
            },
        };
        let request = Request::CreateAgent(verbs::CreateAgent {
            provider: input.provider.clone(),
            workspace,
            model: input.model,
            mode: None,
            title: input.title,
            prompt: Some(input.initial_prompt),
            subagent: input.relationship == Relationship::Subagent,
            notify_on_finish: input.notify_on_finish,
            auto_archive: input.auto_archive.unwrap_or(false),
            unconfined: input.unconfined.unwrap_or(false),
            labels: input.labels.unwrap_or_default(),
            request_id: Some(format!("mcp:create_agent:{}", uuid::Uuid::new_v4())),
            budget: input.budget,
            host: input.host.clone(),
        });
        let Response::Agent(snap) = self.ask(caller, request, "").await? else {
            return Err(unexpected());
        };
        let out = CreatedOutput {
            agent_id: snap.id().to_string(),
            workspace_id: snap
                .record
                .workspace_id
                .as_ref()
                .map(|w| w.to_string())
                .unwrap_or_default(),
            cwd: snap.record.cwd.to_string(),
            status: snap.status,
            title: snap.record.title.clone(),
            parent_agent_id: snap.parent_agent_id.map(|p| p.to_string()),
        };
        let place = match &input.host {
            Some(host) => format!(" on the host {host}"),
            None => String::new(),
        };
        let mut summary =
            format!(
            "Created {} agent {} \"{}\"{place} in {} (workspace {}); status {}. Its first prompt \
             runs in the background.",
            input.provider, out.agent_id, out.title, out.cwd, out.workspace_id, out.status.as_str()
        );
        if let Some(h) = &snap.record.held_turn {
            summary.push_str(&held(h));
        }
        if snap.record.notify_on_finish {
            summary.push_str(" You will get a notice as your next turn when that turn ends.");
        }
        ok(summary, out)
    }

    pub(super) async fn do_send_prompt(
        &self,
        caller: Caller,
        input: SendPromptInput,
    ) -> ToolResult {
        let id = input.agent_id;
        // When the prompt is accepted the turn is running (or queued behind a resume, status
        // initializing), so `wait` cannot mistake the idle state before it for its end.
        let request = Request::Prompt(verbs::Prompt {
            agent_id: id,
            prompt: input.prompt,
            background: input.background,
            notify_on_finish: input.notify_on_finish,
        });
        let Response::Prompted {
            agent,
            background,
            notify,
        } = self.ask(caller, request, "agentId").await?
        else {
            return Err(unexpected());
        };
        let held_turn = agent.record.held_turn.as_deref().map(held);
        let held = held_turn.is_some();
        if background || held {
            let out = PromptOutput {
                agent_id: id.to_string(),
                status: agent.status,
                background: true,
                last_message: None,
                timed_out: None,
            };
            let mut summary = format!("Prompt sent to agent {id}; it is {}.", out.status.as_str());
            if let Some(h) = &held_turn {
                summary.push_str(h);
            }
            if notify.is_some() || held {
                summary.push_str(" You will get a notice as your next turn when the turn ends.");
            }
            return ok(summary, out);
        }
        let wait = Request::Wait(verbs::Wait {
            agent_id: id,
            timeout_secs: Some(FOREGROUND_WAIT.as_secs_f64()),
        });
        let w = self.waited(caller, wait).await?;
        let last = last_message(&w.agent);
        let summary = if w.timed_out {
            format!(
                "Agent {id} is still {} after {} s; use wait_for_agent to keep waiting.",
                w.agent.status.as_str(),
                FOREGROUND_WAIT.as_secs()
            )
        } else {
            format!(
                "Agent {id} is {}. Last message: {}",
                w.agent.status.as_str(),
                excerpt(last.as_deref().unwrap_or("(none)"))
            )
        };
        ok(
            summary,
            PromptOutput {
                agent_id: id.to_string(),
                status: w.agent.status,
                background: false,
                last_message: last,
                timed_out: Some(w.timed_out),
            },
        )
    }

    pub(super) async fn do_wait(&self, caller: Caller, input: WaitInput) -> ToolResult {
        let id = input.agent_id;
        let secs = input.timeout_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
        let wait = Request::Wait(verbs::Wait {
            agent_id: id,
            timeout_secs: Some(secs),
        });
        let w = self.waited(caller, wait).await?;
        let last = last_message(&w.agent);
        let pending = w
            .agent
            .pending_permission
            .as_ref()
            .and_then(|p| serde_json::to_value(p).ok());
        let mut summary = format!("Agent {id} is {}", w.agent.status.as_str());
        if w.timed_out {
            summary.push_str(&format!(" (still going after {secs} s)"));
        }
        if pending.is_some() {
            summary.push_str("; it waits for a permission answer from the user");
        }
        if let Some(m) = &last {
            summary.push_str(&format!(". Last message: {}", excerpt(m)));
        }
        ok(
            summary,
            WaitOutput {
                agent_id: id.to_string(),
                status: w.agent.status,
                last_message: last,
                timed_out: w.timed_out,
                pending_permission: pending,
            },
        )
    }

    pub(super) async fn do_changes(&self, caller: Caller, input: ChangesInput) -> ToolResult {
        let id = input.agent_id;
        let request = Request::Changes(verbs::Changes { agent_id: id });
        let Response::Changes(set) = self.ask(caller, request, "agentId").await? else {
            return Err(unexpected());
        };
        let t = &set.changes.totals;
        let mut summary = format!(
            "Agent {id} changed {} file(s): +{} -{}{} (against {}).",
            t.files,
            t.additions,
            t.deletions,
            if t.binary > 0 {
                format!(", {} binary", t.binary)
            } else {
                String::new()
            },
            set.base_branch.as_deref().unwrap_or("HEAD")
        );
        let mut value =
            serde_json::to_value(&set).map_err(|e| FieldError::new("", e.to_string()))?;
        if let Some(path) = input.path {
            let request = Request::Diff(verbs::Diff {
                agent_id: id,
                path: path.clone(),
                offset: input.offset.unwrap_or(0) as usize,
                limit: input.limit.unwrap_or(1_000) as usize,
            });
            let Response::Diff(diff) = self.ask(caller, request, "path").await? else {
                return Err(unexpected());
            };
            summary.push_str(&format!(
                " Diff of {path}: {} line(s) from {}{}.",
                diff.diff.total_lines,
                diff.diff.offset,
                diff.diff
                    .next_offset
                    .map(|n| format!("; next page at offset {n}"))
                    .unwrap_or_default()
            ));
            value["diff"] =
                serde_json::to_value(&diff.diff).map_err(|e| FieldError::new("", e.to_string()))?;
        }
        ok(summary, value)
    }

    pub(super) async fn do_get(&self, caller: Caller, input: AgentInput) -> ToolResult {
        let request = Request::GetAgent(verbs::GetAgent {
            agent_id: input.agent_id,
        });
        let Response::Agent(snap) = self.ask(caller, request, "agentId").await? else {
            return Err(unexpected());
        };
        let mut summary = format!(
            "Agent {} \"{}\" ({}) is {}",
            snap.id(),
            snap.record.title,
            snap.record.provider,
            snap.status.as_str()
        );
        if snap.record.is_archived() {
            summary.push_str(" and archived");
        }
        if let Some(p) = snap.parent_agent_id {
            summary.push_str(&format!("; parent {p}"));
        }
        if let Some(b) = &snap.tree_budget {
            summary.push_str(&budget_words(b));
        }
        ok(summary, *snap)
    }

    pub(super) async fn do_list(&self, caller: Caller, input: ListInput) -> ToolResult {
        let request = Request::ListAgents(verbs::ListAgents {
            include_archived: input.include_archived.unwrap_or(false),
            parent_id: input.parent_agent_id,
            workspace_id: input.workspace_id.clone(),
            statuses: input.statuses,
            limit: Some(input.limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize),
            labels: input.labels.unwrap_or_default(),
            host: input.host.clone(),
            this_machine: false,
        });
        let Response::Agents { agents, total } = self.ask(caller, request, "").await? else {
            return Err(unexpected());
        };
        let mut summary = format!("{} of {total} matching agents", agents.len());
        // The host of each: the filter's, else the one whose mirror holds it.
        let host_of = |a: &AgentSnapshot| {
            input
                .host
                .clone()
                .or_else(|| self.rt.hosts().holder(a.id()))
        };
        for a in agents.iter().take(20) {
            let place = host_of(a).map(|h| format!(" on {h}")).unwrap_or_default();
            summary.push_str(&format!(
                "\n- {} \"{}\" {} {}{place}",
                a.id(),
                a.record.title,
                a.record.provider,
                a.status.as_str()
            ));
        }
        if agents.len() > 20 {
            summary.push_str("\n- …");
        }
        let agents: Vec<ListEntry> = agents
            .into_iter()
            .map(|a| ListEntry {
                host: host_of(&a),
                agent: a.into(),
            })
            .collect();
        ok(summary, ListOutput::folded(agents, total))
    }

    pub(super) async fn do_cancel(&self, caller: Caller, input: AgentInput) -> ToolResult {
        let id = input.agent_id;
        let request = Request::Cancel(verbs::Cancel { agent_id: id });
        let Response::Agent(agent) = self.ask(caller, request, "agentId").await? else {
            return Err(unexpected());
        };
        let s = agent.status;
        ok(
            format!("Agent {id} is {}.", s.as_str()),
            CancelOutput {
                agent_id: id.to_string(),
                status: s,
            },
        )
    }

    pub(super) async fn do_archive(&self, caller: Caller, input: AgentInput) -> ToolResult {
        let id = input.agent_id;
        let request = Request::Archive(verbs::Archive { agent_id: id });
        let Response::AgentIds(ids) = self.ask(caller, request, "agentId").await? else {
            return Err(unexpected());
        };
        let archived: Vec<String> = ids.iter().map(|a| a.to_string()).collect();
        let summary = if archived.is_empty() {
            format!("Agent {id} was already archived.")
        } else {
            format!(
                "Archived {} agent(s): {}",
                archived.len(),
                archived.join(", ")
            )
        };
        ok(summary, ArchiveOutput { archived })
    }

    pub(super) async fn do_create_worktree(
        &self,
        caller: Caller,
        input: CreateWorktreeInput,
    ) -> ToolResult {
        let request = Request::CreateWorktree(verbs::CreateWorktree {
            repo: input.repo,
            target: input.target,
            request_id: Some(format!("mcp:create_worktree:{}", uuid::Uuid::new_v4())),
            host: None,
        });
        let Response::Workspace(ws) = self.ask(caller, request, "").await? else {
            return Err(unexpected());
        };
        let out = WorktreeOutput {
            workspace_id: ws.record.workspace_id.to_string(),
            cwd: ws.record.cwd.clone(),
            branch: ws.record.branch.clone().unwrap_or_default(),
        };
        ok(
            format!(
                "Created worktree {} on branch {} (workspace {}).",
                out.cwd, out.branch, out.workspace_id
            ),
            out,
        )
    }
}

/// The end of the agent's last message, as much as a tool result carries.
fn last_message(agent: &AgentSnapshot) -> Option<String> {
    agent
        .record
        .last_message
        .as_deref()
        .map(|m| tail(m, LAST_MESSAGE_CHARS))
}
