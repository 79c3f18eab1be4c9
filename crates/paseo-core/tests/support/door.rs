//! The tests' words for the runtime's verbs: each one is a request through
//! [`Server::call`], the only public door (the one every client uses), answered in the
//! shape the test reads. A test reaches nothing a client could not.

use std::future::Future;
use std::time::Duration;

use paseo_core::api::verbs;
use paseo_core::api::{Request, Response};
use paseo_core::config::NotificationsConfig;
use paseo_core::engine::ListFilter;
use paseo_core::model::{
    AgentId, ArchivePlan, Budget, FleetCounts, Status, TimelineItem, WorkspaceId,
};
use paseo_core::providers::ProviderInfo;
use paseo_core::runtime::{
    AgentChanges, AgentDiff, AgentSnapshot, Alerts, Caller, CreateAgent, FleetSnapshot, Prompted,
    RuntimeError, WaitResult, WorkspaceSnapshot,
};
use paseo_core::server::Server;
use paseo_core::workspaces::changes::{Discarded, GhStatus, Merged, Page};
use paseo_core::workspaces::worktree::WorktreeTarget;

/// The answer a verb never gives: a test bug, not a runtime error.
fn unexpected(what: &str, r: Response) -> ! {
    panic!("{what}: an answer of another kind: {r:?}")
}

macro_rules! door {
    ($(
        $(#[$doc:meta])*
        fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $out:ty
            = $caller:expr, $req:expr, $pat:pat => $val:expr;
    )*) => {
        /// The verbs as typed calls (see the module's note).
        pub trait Door {
            $(
                $(#[$doc])*
                fn $name(&self $(, $arg: $ty)*)
                    -> impl Future<Output = Result<$out, RuntimeError>> + Send;
            )*
        }

        impl Door for Server {
            $(
                #[allow(unused_variables)]
                fn $name(&self $(, $arg: $ty)*)
                    -> impl Future<Output = Result<$out, RuntimeError>> + Send {
                    async move {
                        let caller: Caller = $caller;
                        let request: Request = $req.into();
                        match self.call(caller, request).await? {
                            $pat => Ok($val),
                            other => unexpected(stringify!($name), other),
                        }
                    }
                }
            )*
        }
    };
}

fn create_request(req: CreateAgent) -> verbs::CreateAgent {
    let mut v = verbs::CreateAgent::new(req.provider, req.workspace);
    v.model = req.model;
    v.mode = req.mode;
    v.title = req.title;
    v.prompt = req.initial_prompt;
    v.subagent = req.subagent;
    v.notify_on_finish = req.notify_on_finish;
    v.auto_archive = req.auto_archive;
    v.unconfined = req.unconfined;
    v.labels = req.labels;
    v.request_id = req.request;
    v.budget = req.budget;
    v
}

door! {
    /// Creates an agent for `req.caller`.
    fn create(&self, req: CreateAgent) -> AgentSnapshot = req.caller, create_request(req),
        Response::Agent(a) => *a;
    fn get(&self, id: AgentId) -> AgentSnapshot = Caller::User,
        verbs::GetAgent { agent_id: id }, Response::Agent(a) => *a;
    fn list(&self, filter: ListFilter, limit: usize) -> (Vec<AgentSnapshot>, usize) = Caller::User,
        verbs::ListAgents::here(filter, limit),
        Response::Agents { agents, total } => (agents, total);
    fn archived(&self, offset: usize, limit: usize) -> (Vec<AgentSnapshot>, usize) = Caller::User,
        verbs::ArchivedAgents { offset: Some(offset), limit: Some(limit), host: None },
        Response::Agents { agents, total } => (agents, total);
    fn add_workspace(&self, path: String) -> WorkspaceSnapshot = Caller::User,
        verbs::AddWorkspace { path, host: None }, Response::Workspace(w) => *w;
    fn archive_workspace(&self, id: WorkspaceId, even_if_running: bool) -> Vec<AgentId> =
        Caller::User,
        verbs::ArchiveWorkspace { workspace_id: id, even_if_running },
        Response::AgentIds(ids) => ids;
    fn rename_workspace(&self, id: WorkspaceId, name: &str) -> WorkspaceSnapshot = Caller::User,
        verbs::RenameWorkspace { workspace_id: id, name: name.to_string() },
        Response::Workspace(w) => *w;
    fn prompt(
        &self,
        caller: Caller,
        id: AgentId,
        text: String,
        background: Option<bool>,
        notify_on_finish: Option<bool>
    ) -> Prompted = caller,
        verbs::Prompt { agent_id: id, prompt: text, background, notify_on_finish },
        Response::Prompted { agent, background, notify } =>
            Prompted { agent: *agent, background, notify };
    fn cancel(&self, caller: Caller, id: AgentId) -> Status = caller,
        verbs::Cancel { agent_id: id }, Response::Agent(a) => a.status;
    fn archive(&self, caller: Caller, id: AgentId) -> Vec<AgentId> = caller,
        verbs::Archive { agent_id: id }, Response::AgentIds(ids) => ids;
    fn archive_finished(&self, parent: AgentId) -> Vec<AgentId> = Caller::User,
        verbs::ArchiveFinished { parent_id: parent }, Response::AgentIds(ids) => ids;
    /// What archiving `id` (or, `finished`, its finished subagents) would touch.
    fn archive_plan(&self, id: AgentId, finished: bool) -> ArchivePlan = Caller::User,
        if finished {
            Request::FinishedPlan(verbs::FinishedPlan { parent_id: id })
        } else {
            Request::ArchivePlan(verbs::ArchivePlan { agent_id: id })
        },
        Response::ArchivePlan(p) => p;
    fn detach(&self, id: AgentId) -> AgentSnapshot = Caller::User,
        verbs::Detach { agent_id: id }, Response::Agent(a) => *a;
    fn reattach(&self, id: AgentId, parent: AgentId, check: bool) -> () = Caller::User,
        verbs::Reattach { agent_id: id, parent_id: parent, check }, Response::Done => ();
    fn restore(&self, id: AgentId, as_root: bool) -> Vec<AgentId> = Caller::User,
        verbs::Restore { agent_id: id, as_root, member: false }, Response::AgentIds(ids) => ids;
    fn restore_member(&self, id: AgentId, as_root: bool) -> Vec<AgentId> = Caller::User,
        verbs::Restore { agent_id: id, as_root, member: true }, Response::AgentIds(ids) => ids;
    fn answer_permission(&self, id: AgentId, request_id: String, allow: bool) -> () =
        Caller::User,
        verbs::AnswerPermission { agent_id: id, request_id, allow }, Response::Done => ();
    fn set_shown(&self, window: &str, agent: Option<AgentId>) -> () = Caller::User,
        verbs::Shown { window: window.to_string(), agent_id: agent }, Response::Done => ();
    fn mark_seen(&self, id: AgentId) -> () = Caller::User,
        verbs::MarkSeen { agent_id: id }, Response::Done => ();
    fn wake(&self, id: AgentId) -> bool = Caller::User,
        verbs::Wake { agent_id: id }, Response::Flag(started) => started;
    fn stop(&self, id: AgentId) -> () = Caller::User,
        verbs::Stop { agent_id: id }, Response::Done => ();
    fn timeline(&self, id: AgentId, before: u64, limit: usize) -> Vec<TimelineItem> =
        Caller::User,
        verbs::Timeline { agent_id: id, before: Some(before), limit: Some(limit) },
        Response::Timeline(items) => items;
    fn create_worktree(
        &self,
        caller: Caller,
        repo: Option<String>,
        target: WorktreeTarget,
        request_id: Option<String>
    ) -> WorkspaceSnapshot = caller,
        verbs::CreateWorktree { repo, target, request_id, host: None },
        Response::Workspace(w) => *w;
    fn agent_changes(&self, id: AgentId) -> AgentChanges = Caller::User,
        verbs::Changes { agent_id: id }, Response::Changes(c) => *c;
    fn agent_diff(&self, id: AgentId, path: String, page: Page) -> AgentDiff = Caller::User,
        verbs::Diff { agent_id: id, path, offset: page.offset, limit: page.limit },
        Response::Diff(d) => *d;
    fn commit_agent_changes(&self, id: AgentId, message: String) -> String = Caller::User,
        verbs::Commit { agent_id: id, message }, Response::Text(commit) => commit;
    fn merge_agent_changes(&self, id: AgentId) -> Merged = Caller::User,
        verbs::Merge { agent_id: id }, Response::Merged(m) => m;
    /// Discards the agent's changes, kept under its title.
    fn discard_agent_changes(&self, id: AgentId) -> Option<Discarded> = Caller::User,
        verbs::Discard { agent_id: id }, Response::Discarded(d) => d;
    fn pr_status(&self, id: AgentId) -> GhStatus = Caller::User,
        verbs::PrStatus { agent_id: id }, Response::PrStatus(s) => s;
    fn create_pr(&self, id: AgentId, title: String, body: String) -> String = Caller::User,
        verbs::CreatePr { agent_id: id, title, body }, Response::Text(url) => url;
    fn open_in_editor(&self, id: AgentId, path: Option<String>) -> String = Caller::User,
        verbs::OpenInEditor { agent_id: id, path }, Response::Text(opened) => opened;
    fn wait(&self, id: AgentId, timeout: Duration) -> WaitResult = Caller::User,
        verbs::Wait { agent_id: id, timeout_secs: Some(timeout.as_secs_f64()) },
        Response::Waited { agent, timed_out } => WaitResult { agent: *agent, timed_out };
    fn set_budget(&self, id: AgentId, budget: Option<Budget>) -> AgentSnapshot = Caller::User,
        verbs::SetBudget { agent_id: id, budget }, Response::Agent(a) => *a;
    fn notification_settings(&self) -> NotificationsConfig = Caller::User,
        verbs::NotificationSettings {}, Response::NotificationSettings(s) => s;
    fn set_notification_settings(&self, settings: NotificationsConfig) -> () = Caller::User,
        verbs::SetNotificationSettings { settings }, Response::NotificationSettings(_) => ();
    /// The fleet as records (`fleet`).
    fn snapshot(&self) -> FleetSnapshot = Caller::User,
        verbs::Fleet {}, Response::Fleet(f) => *f;
    fn counts(&self) -> FleetCounts = Caller::User, verbs::Counts {}, Response::Counts(c) => c;
    fn alerts(&self) -> Alerts = Caller::User, verbs::Alerts {}, Response::Alerts(a) => *a;
    fn providers(&self) -> Vec<ProviderInfo> = Caller::User,
        verbs::Providers {}, Response::Providers(p) => p;
    /// The window snapshot and the number of the last event it reflects.
    fn sync_snapshot(&self) -> (u64, String) = Caller::User,
        verbs::SyncSnapshot { host: None }, Response::Synced { seq, window } => (seq, window);
}
