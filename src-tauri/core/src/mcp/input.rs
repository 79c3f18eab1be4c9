//! The tools' input types and their validation.
//!
//! The types give the input schemas (schemars, the same serde shape the tools accept). Parsing
//! is done by hand on the JSON value rather than by serde, because serde loses the field path
//! inside internally tagged unions (`workspace.source.target` buffers its content before the
//! variant is known): every error here names the offending field by its full path and says
//! what is wrong, e.g. `workspace.source.target.newBranch: is required`.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::model::{AgentId, Status, WorkspaceId};
use crate::workspaces::worktree::WorktreeTarget;

/// Largest `limit` of `list_agents`.
pub const MAX_LIST_LIMIT: u64 = 10_000;
/// Default `limit` of `list_agents`.
pub const DEFAULT_LIST_LIMIT: u64 = 200;
/// Default and largest `timeoutSeconds` of `wait_for_agent`.
pub const DEFAULT_WAIT_SECONDS: f64 = 30.0;
pub const MAX_WAIT_SECONDS: f64 = 600.0;

/// A bad input: which field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

type R<T> = Result<T, FieldError>;

/// A tool input parsed from the call's raw arguments.
pub trait Input: Sized {
    fn parse(v: &Value) -> R<Self>;
}

/// The raw arguments of a tool call, with the input schema of `T`. Deserializing never fails,
/// so a bad input reaches the tool, which answers it with a tool error naming the field
/// (rmcp would answer a serde failure with a protocol error instead).
pub struct Args<T> {
    pub raw: Value,
    _t: PhantomData<T>,
}

impl<T: Input> Args<T> {
    pub fn parse(&self) -> R<T> {
        T::parse(&self.raw)
    }
}

impl<'de, T> Deserialize<'de> for Args<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Args {
            raw: Value::deserialize(d)?,
            _t: PhantomData,
        })
    }
}

impl<T: JsonSchema> JsonSchema for Args<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(g)
    }
}

/// The JSON Schema of a tool input, with every subschema inlined: no `$ref`/`$defs`, which some
/// clients' schema converters do not follow.
pub fn input_schema<T: JsonSchema>() -> std::sync::Arc<Map<String, Value>> {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut map = match schema.to_value() {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    // The wrapper type's own title and doc are noise to a model.
    map.remove("title");
    map.remove("description");
    map.remove("$schema");
    std::sync::Arc::new(map)
}

// ------------------------------------------------------------------ the walker

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One JSON object being read, with its path and the fields it may have.
struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    /// `v` must be an object whose keys are all in `known`.
    fn new(v: &'a Value, path: &str, known: &[&str]) -> R<Obj<'a>> {
        let Value::Object(map) = v else {
            let message = format!("must be an object, got {}", describe(v));
            return Err(if path.is_empty() {
                FieldError::new("", format!("the arguments {message}"))
            } else {
                FieldError::new(path, message)
            });
        };
        for k in map.keys() {
            if !known.contains(&k.as_str()) {
                return Err(FieldError::new(
                    join(path, k),
                    format!("unknown field; expected one of: {}", known.join(", ")),
                ));
            }
        }
        Ok(Obj {
            path: path.to_string(),
            map,
        })
    }

    fn field(&self, name: &str) -> String {
        join(&self.path, name)
    }

    /// The value of `name`; absent and `null` both count as not given.
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn req(&self, name: &str) -> R<&'a Value> {
        self.get(name)
            .ok_or_else(|| FieldError::new(self.field(name), "is required"))
    }

    fn opt_str(&self, name: &str) -> R<Option<&'a str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be a string, got {}", describe(v)),
            )),
        }
    }

    /// A string that must be given and not blank.
    fn req_str(&self, name: &str) -> R<&'a str> {
        self.req(name)?;
        let s = self.opt_str(name)?.unwrap_or_default();
        if s.trim().is_empty() {
            return Err(FieldError::new(self.field(name), "must not be empty"));
        }
        Ok(s)
    }

    /// An optional string; a blank one counts as not given.
    fn opt_text(&self, name: &str) -> R<Option<String>> {
        Ok(self
            .opt_str(name)?
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string))
    }

    fn opt_bool(&self, name: &str) -> R<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be true or false, got {}", describe(v)),
            )),
        }
    }

    fn opt_f64(&self, name: &str) -> R<Option<f64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| {
                FieldError::new(self.field(name), "must be a finite number".to_string())
            }),
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be a number, got {}", describe(v)),
            )),
        }
    }

    fn opt_u64(&self, name: &str, max: u64) -> R<Option<u64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(x) if x <= max => Ok(Some(x)),
                _ => Err(FieldError::new(
                    self.field(name),
                    format!("must be a whole number from 0 to {max}, got {n}"),
                )),
            },
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be a whole number, got {}", describe(v)),
            )),
        }
    }

    fn req_agent_id(&self, name: &str) -> R<AgentId> {
        let s = self.req_str(name)?;
        agent_id(&self.field(name), s)
    }

    fn opt_agent_id(&self, name: &str) -> R<Option<AgentId>> {
        match self.opt_str(name)? {
            None => Ok(None),
            Some(s) => agent_id(&self.field(name), s).map(Some),
        }
    }

    /// The `kind` tag of a union: required, a string, one of `kinds`.
    fn kind(&self, kinds: &[&'static str]) -> R<&'static str> {
        let field = self.field("kind");
        let v = self.get("kind").ok_or_else(|| {
            FieldError::new(
                &field,
                format!("is required (one of: {})", kinds.join(", ")),
            )
        })?;
        let Value::String(s) = v else {
            return Err(FieldError::new(
                &field,
                format!("must be a string, one of: {}", kinds.join(", ")),
            ));
        };
        kinds.iter().copied().find(|k| k == s).ok_or_else(|| {
            FieldError::new(
                &field,
                format!("unknown kind {s:?}; expected one of: {}", kinds.join(", ")),
            )
        })
    }
}

fn agent_id(field: &str, s: &str) -> R<AgentId> {
    s.parse::<AgentId>().map_err(|_| {
        FieldError::new(
            field,
            format!("{s:?} is not an agent id (expected a UUID such as 2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d)"),
        )
    })
}

/// The keys of a tagged union's variant (with its `kind`).
fn with_kind<'k>(fields: &[&'k str]) -> Vec<&'k str> {
    let mut v = vec!["kind"];
    v.extend_from_slice(fields);
    v
}

/// Reads a union: checks `kind` first (against every key the union knows, so a misspelled
/// field is reported as unknown), then the variant's own keys.
fn union<'a>(
    v: &'a Value,
    path: &str,
    variants: &[(&'static str, &[&str])],
) -> R<(&'static str, Obj<'a>)> {
    let mut all: Vec<&str> = vec!["kind"];
    for (_, fs) in variants {
        for f in *fs {
            if !all.contains(f) {
                all.push(f);
            }
        }
    }
    let o = Obj::new(v, path, &all)?;
    let kinds: Vec<&'static str> = variants.iter().map(|(k, _)| *k).collect();
    let kind = o.kind(&kinds)?;
    let own = variants
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, fs)| with_kind(fs))
        .unwrap_or_default();
    for k in o.map.keys() {
        if !own.contains(&k.as_str()) && !o.map[k].is_null() {
            return Err(FieldError::new(
                join(path, k),
                format!(
                    "is not a field of kind {kind:?} (its fields: {})",
                    own.join(", ")
                ),
            ));
        }
    }
    Ok((kind, o))
}

// ------------------------------------------------------------------ shared shapes

/// What a new worktree checks out.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum TargetInput {
    /// Create the new branch `newBranch` from `base` (default: the repository's HEAD).
    #[serde(rename_all = "camelCase")]
    BranchOff {
        new_branch: String,
        #[serde(default)]
        base: Option<String>,
    },
    /// Check out the existing branch `branch` (it must not be checked out anywhere else).
    CheckoutBranch { branch: String },
}

impl TargetInput {
    fn parse_at(v: &Value, path: &str) -> R<TargetInput> {
        let (kind, o) = union(
            v,
            path,
            &[
                ("branch-off", &["newBranch", "base"]),
                ("checkout-branch", &["branch"]),
            ],
        )?;
        Ok(match kind {
            "branch-off" => TargetInput::BranchOff {
                new_branch: o.req_str("newBranch")?.to_string(),
                base: o.opt_text("base")?,
            },
            _ => TargetInput::CheckoutBranch {
                branch: o.req_str("branch")?.to_string(),
            },
        })
    }

    pub fn into_target(self) -> WorktreeTarget {
        match self {
            TargetInput::BranchOff { new_branch, base } => {
                WorktreeTarget::BranchOff { new_branch, base }
            }
            TargetInput::CheckoutBranch { branch } => WorktreeTarget::CheckoutBranch { branch },
        }
    }
}

// ------------------------------------------------------------------ create_agent

/// Who the new agent belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Relationship {
    /// A subagent of the caller: it carries the parent label, shows in the caller's track and
    /// is archived with it. Needs an agent-scoped session.
    Subagent,
    /// A root agent: no parent label; the caller's archive leaves it alone.
    Detached,
}

/// Where the new agent works.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkspaceInput {
    /// The caller's workspace, in the caller's cwd or in `cwd` (an absolute path inside the
    /// workspace). Needs an agent-scoped session.
    Current {
        #[serde(default)]
        cwd: Option<String>,
    },
    /// A new workspace.
    Create { source: SourceInput },
}

/// What a new workspace is made from.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SourceInput {
    /// An existing directory (absolute path).
    Directory { path: String },
    /// A new git worktree under `$PASEO_HOME/worktrees/` of the repository containing `repo`
    /// (an absolute path; default: the caller's cwd; required for a user-token session).
    Worktree {
        #[serde(default)]
        repo: Option<String>,
        target: TargetInput,
    },
}

/// Input of `create_agent`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAgentInput {
    /// The provider id: `claude`, `codex`, `shell`, or a configured command provider.
    pub provider: String,
    /// The model (provider-specific). Default: the caller's model when the provider is the
    /// caller's, else the provider's default.
    #[serde(default)]
    pub model: Option<String>,
    /// A short title (default: the first line of the prompt).
    #[serde(default)]
    pub title: Option<String>,
    /// The first prompt; it runs in the background.
    pub initial_prompt: String,
    pub relationship: Relationship,
    pub workspace: WorkspaceInput,
    /// Whether the first turn's end is reported to the caller as its next turn (default true
    /// for agent-scoped callers; a user-token session cannot be notified).
    #[serde(default)]
    pub notify_on_finish: Option<bool>,
    /// Archive the agent (and a worktree this call created) after its first turn ends.
    #[serde(default)]
    pub auto_archive: Option<bool>,
    /// Extra labels (string to string).
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
}

impl Input for CreateAgentInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(
            v,
            "",
            &[
                "provider",
                "model",
                "title",
                "initialPrompt",
                "relationship",
                "workspace",
                "notifyOnFinish",
                "autoArchive",
                "labels",
            ],
        )?;
        let provider = o.req_str("provider")?.trim().to_string();
        let model = o.opt_text("model")?;
        let title = o.opt_text("title")?;
        let initial_prompt = o.req_str("initialPrompt")?.to_string();
        let (rk, _) = union(
            o.req("relationship")?,
            "relationship",
            &[("subagent", &[]), ("detached", &[])],
        )?;
        let relationship = if rk == "subagent" {
            Relationship::Subagent
        } else {
            Relationship::Detached
        };
        let (wk, w) = union(
            o.req("workspace")?,
            "workspace",
            &[("current", &["cwd"]), ("create", &["source"])],
        )?;
        let workspace = if wk == "current" {
            WorkspaceInput::Current {
                cwd: w.opt_text("cwd")?,
            }
        } else {
            let (sk, s) = union(
                w.req("source")?,
                "workspace.source",
                &[("directory", &["path"]), ("worktree", &["repo", "target"])],
            )?;
            let source = if sk == "directory" {
                SourceInput::Directory {
                    path: s.req_str("path")?.to_string(),
                }
            } else {
                SourceInput::Worktree {
                    repo: s.opt_text("repo")?,
                    target: TargetInput::parse_at(s.req("target")?, "workspace.source.target")?,
                }
            };
            WorkspaceInput::Create { source }
        };
        let labels = match o.get("labels") {
            None => None,
            Some(Value::Object(m)) => {
                let mut out = BTreeMap::new();
                for (k, v) in m {
                    match v {
                        Value::String(s) => {
                            out.insert(k.clone(), s.clone());
                        }
                        other => {
                            return Err(FieldError::new(
                                format!("labels.{k}"),
                                format!("must be a string, got {}", describe(other)),
                            ))
                        }
                    }
                }
                Some(out)
            }
            Some(other) => {
                return Err(FieldError::new(
                    "labels",
                    format!("must be an object of strings, got {}", describe(other)),
                ))
            }
        };
        Ok(CreateAgentInput {
            provider,
            model,
            title,
            initial_prompt,
            relationship,
            workspace,
            notify_on_finish: o.opt_bool("notifyOnFinish")?,
            auto_archive: o.opt_bool("autoArchive")?,
            labels,
        })
    }
}

// ------------------------------------------------------------------ the other tools

/// Input of `send_agent_prompt`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendPromptInput {
    /// The agent to prompt (a UUID).
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    pub prompt: String,
    /// Return at once (default for agent-scoped callers) instead of waiting (bounded) for the
    /// turn to end and returning its last message.
    #[serde(default)]
    pub background: Option<bool>,
    /// Report the turn's end to the caller as its next turn (default: true for agent-scoped
    /// background prompts, false otherwise).
    #[serde(default)]
    pub notify_on_finish: Option<bool>,
}

impl Input for SendPromptInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(
            v,
            "",
            &["agentId", "prompt", "background", "notifyOnFinish"],
        )?;
        Ok(SendPromptInput {
            agent_id: o.req_agent_id("agentId")?,
            prompt: o.req_str("prompt")?.to_string(),
            background: o.opt_bool("background")?,
            notify_on_finish: o.opt_bool("notifyOnFinish")?,
        })
    }
}

/// Input of `wait_for_agent`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitInput {
    /// The agent to wait for (a UUID).
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    /// How long to wait at most, in seconds (default 30, at most 600).
    #[serde(default)]
    #[schemars(range(min = 0, max = 600))]
    pub timeout_seconds: Option<f64>,
}

impl Input for WaitInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(v, "", &["agentId", "timeoutSeconds"])?;
        let agent_id = o.req_agent_id("agentId")?;
        let t = o.opt_f64("timeoutSeconds")?;
        if let Some(t) = t {
            if !(0.0..=MAX_WAIT_SECONDS).contains(&t) {
                return Err(FieldError::new(
                    "timeoutSeconds",
                    format!("must be between 0 and {MAX_WAIT_SECONDS}, got {t}"),
                ));
            }
        }
        Ok(WaitInput {
            agent_id,
            timeout_seconds: t,
        })
    }
}

/// Input of `get_agent`, `cancel_agent` and `archive_agent`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentInput {
    /// The agent (a UUID).
    #[schemars(with = "String")]
    pub agent_id: AgentId,
}

impl Input for AgentInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(v, "", &["agentId"])?;
        Ok(AgentInput {
            agent_id: o.req_agent_id("agentId")?,
        })
    }
}

/// A status filter value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusInput {
    Initializing,
    Idle,
    Running,
    Error,
    Closed,
}

/// Input of `list_agents`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListInput {
    /// Include archived agents (default false).
    #[serde(default)]
    pub include_archived: Option<bool>,
    /// Only the children of this agent.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub parent_agent_id: Option<AgentId>,
    /// Only agents of this workspace.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub workspace_id: Option<WorkspaceId>,
    /// Only agents with one of these live statuses.
    #[serde(default)]
    pub statuses: Option<Vec<StatusInput>>,
    /// At most this many agents, oldest first (default 200, at most 10,000); `total` counts
    /// every match.
    #[serde(default)]
    #[schemars(range(min = 0, max = 10000))]
    pub limit: Option<u64>,
}

impl ListInput {
    pub fn statuses(&self) -> Option<Vec<Status>> {
        self.statuses.as_ref().map(|v| {
            v.iter()
                .map(|s| match s {
                    StatusInput::Initializing => Status::Initializing,
                    StatusInput::Idle => Status::Idle,
                    StatusInput::Running => Status::Running,
                    StatusInput::Error => Status::Error,
                    StatusInput::Closed => Status::Closed,
                })
                .collect()
        })
    }
}

impl Input for ListInput {
    fn parse(v: &Value) -> R<Self> {
        // No arguments at all is a plain "list everything".
        let empty = Value::Object(Map::new());
        let v = if v.is_null() { &empty } else { v };
        let o = Obj::new(
            v,
            "",
            &[
                "includeArchived",
                "parentAgentId",
                "workspaceId",
                "statuses",
                "limit",
            ],
        )?;
        let workspace_id = match o.opt_str("workspaceId")? {
            None => None,
            Some(s) => Some(
                s.parse::<WorkspaceId>()
                    .map_err(|e| FieldError::new("workspaceId", e.to_string()))?,
            ),
        };
        let statuses = match o.get("statuses") {
            None => None,
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let field = format!("statuses[{i}]");
                    let s = item.as_str().ok_or_else(|| {
                        FieldError::new(
                            &field,
                            format!("must be a status string, got {}", describe(item)),
                        )
                    })?;
                    let st = match s {
                        "initializing" => StatusInput::Initializing,
                        "idle" => StatusInput::Idle,
                        "running" => StatusInput::Running,
                        "error" => StatusInput::Error,
                        "closed" => StatusInput::Closed,
                        other => {
                            return Err(FieldError::new(
                                &field,
                                format!("unknown status {other:?}; expected one of: initializing, idle, running, error, closed"),
                            ))
                        }
                    };
                    out.push(st);
                }
                Some(out)
            }
            Some(other) => {
                return Err(FieldError::new(
                    "statuses",
                    format!("must be an array of statuses, got {}", describe(other)),
                ))
            }
        };
        Ok(ListInput {
            include_archived: o.opt_bool("includeArchived")?,
            parent_agent_id: o.opt_agent_id("parentAgentId")?,
            workspace_id,
            statuses,
            limit: o.opt_u64("limit", MAX_LIST_LIMIT)?,
        })
    }
}

/// Input of `create_worktree`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWorktreeInput {
    /// An absolute path inside the git repository (default: the caller's cwd; required for a
    /// user-token session).
    #[serde(default)]
    pub repo: Option<String>,
    pub target: TargetInput,
}

impl Input for CreateWorktreeInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(v, "", &["repo", "target"])?;
        Ok(CreateWorktreeInput {
            repo: o.opt_text("repo")?,
            target: TargetInput::parse_at(o.req("target")?, "target")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err<T: Input + fmt::Debug>(v: Value) -> String {
        T::parse(&v).unwrap_err().to_string()
    }

    fn valid_create() -> Value {
        json!({
            "provider": "claude",
            "initialPrompt": "write tests",
            "relationship": {"kind": "subagent"},
            "workspace": {"kind": "create", "source": {"kind": "worktree", "repo": "/r",
                "target": {"kind": "branch-off", "newBranch": "feat/x", "base": "main"}}},
            "labels": {"team": "a"},
            "notifyOnFinish": false
        })
    }

    /// The hand parser and serde (which the schema describes) agree on valid inputs.
    #[test]
    fn parser_agrees_with_the_schema_types() {
        let cases = [
            valid_create(),
            json!({"provider": "shell", "initialPrompt": "ls", "relationship": {"kind": "detached"},
                   "workspace": {"kind": "current", "cwd": "/tmp"}, "autoArchive": true}),
            json!({"provider": "shell", "initialPrompt": "ls", "relationship": {"kind": "detached"},
                   "workspace": {"kind": "create", "source": {"kind": "directory", "path": "/tmp"}},
                   "title": "t", "model": "m"}),
        ];
        for c in cases {
            let a = CreateAgentInput::parse(&c).unwrap();
            let b: CreateAgentInput = serde_json::from_value(c).unwrap();
            assert_eq!(a, b);
        }
        let w = json!({"target": {"kind": "checkout-branch", "branch": "b"}});
        assert_eq!(
            CreateWorktreeInput::parse(&w).unwrap(),
            serde_json::from_value::<CreateWorktreeInput>(w).unwrap()
        );
        let l = json!({"statuses": ["idle", "running"], "limit": 5, "includeArchived": true,
                       "workspaceId": "ws-1"});
        assert_eq!(
            ListInput::parse(&l).unwrap(),
            serde_json::from_value::<ListInput>(l).unwrap()
        );
    }

    #[test]
    fn errors_name_the_field_by_path() {
        let mut v = valid_create();
        v["workspace"]["source"]["target"]
            .as_object_mut()
            .unwrap()
            .remove("newBranch");
        assert_eq!(
            err::<CreateAgentInput>(v),
            "workspace.source.target.newBranch: is required"
        );
        let mut v = valid_create();
        v["relationship"]["kind"] = json!("sibling");
        assert!(
            err::<CreateAgentInput>(v).starts_with("relationship.kind: unknown kind \"sibling\"")
        );
        let mut v = valid_create();
        v["workspace"] = json!({"kind": "current", "source": {}});
        assert!(err::<CreateAgentInput>(v)
            .starts_with("workspace.source: is not a field of kind \"current\""));
        let mut v = valid_create();
        v["workspace"]["source"]["target"]["newBranch"] = json!(5);
        assert_eq!(
            err::<CreateAgentInput>(v),
            "workspace.source.target.newBranch: must be a string, got a number"
        );
        let mut v = valid_create();
        v["labels"]["x"] = json!(1);
        assert_eq!(
            err::<CreateAgentInput>(v),
            "labels.x: must be a string, got a number"
        );
        let mut v = valid_create();
        v["initialPrompt"] = json!("   ");
        assert_eq!(
            err::<CreateAgentInput>(v),
            "initialPrompt: must not be empty"
        );
        let mut v = valid_create();
        v["bogus"] = json!(1);
        assert!(err::<CreateAgentInput>(v).starts_with("bogus: unknown field"));
        let mut v = valid_create();
        v.as_object_mut().unwrap().remove("relationship");
        assert_eq!(err::<CreateAgentInput>(v), "relationship: is required");
        assert!(err::<CreateAgentInput>(json!([1])).contains("must be an object"));
        assert!(err::<AgentInput>(json!({"agentId": "../etc"}))
            .starts_with("agentId: \"../etc\" is not an agent id"));
        assert_eq!(
            err::<WaitInput>(json!({"agentId": AgentId::new(), "timeoutSeconds": 601})),
            "timeoutSeconds: must be between 0 and 600, got 601"
        );
        assert!(err::<ListInput>(json!({"limit": 10001}))
            .starts_with("limit: must be a whole number from 0 to 10000"));
        assert!(err::<ListInput>(json!({"statuses": ["idle", "busy"]}))
            .starts_with("statuses[1]: unknown status \"busy\""));
        assert!(err::<ListInput>(json!({"workspaceId": "a/b"}))
            .starts_with("workspaceId: invalid workspace id"));
        assert!(
            err::<CreateWorktreeInput>(json!({"target": {"kind": "checkout-branch"}}))
                .starts_with("target.branch: is required")
        );
        assert!(ListInput::parse(&Value::Null).is_ok());
    }

    #[test]
    fn schemas_are_objects_with_the_required_fields() {
        let s = serde_json::to_value(schemars::schema_for!(CreateAgentInput)).unwrap();
        assert_eq!(s["type"], "object");
        let req: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for f in ["provider", "initialPrompt", "relationship", "workspace"] {
            assert!(req.contains(&f), "{f} not required in {s}");
        }
        assert!(!req.contains(&"model"));
    }
}
