//! The desktop UI end to end, in the real webview over WebDriver (one test binary, one module per
//! subject): tab close (archive with a native confirm for a running root agent, layout-only for a
//! subagent), the subagents track (open, detach, archive X, "Archive finished", restore), several
//! windows, workspace activity, the layout kept per window across restarts, the new-agent form,
//! the permission prompt with tool calls from the real Claude Code CLI (against a scripted
//! stand-in for the Anthropic API), timeline paging, notices, the folder picker, and the README
//! screenshots. Other agents are real shell agents; subagents are created the way agents create
//! them, through the MCP server with the parent's own token. Each test checks what the DOM shows
//! and, where it matters, what is on disk.

#[path = "../common/mod.rs"]
mod common;

// The scripted Anthropic Messages API the core's Claude tests use, for the real Claude Code CLI.
#[allow(dead_code)]
#[path = "../../crates/paseo-core/tests/support/anthropic.rs"]
mod anthropic;

// The field-table checker that keeps docs/data-model.md true.
#[path = "../../crates/paseo-core/tests/support/doc_keys.rs"]
mod doc_keys;

mod helpers;

// A real sshd on loopback and a throwaway user, the hosts tests' (SPEC 17).
#[allow(dead_code)]
#[path = "../hosts_support/mod.rs"]
mod hosts_support;

mod budget;
mod cards;
mod catch_up;
mod changes;
mod chrome;
mod composer;
mod containment;
mod counts;
mod dark;
mod find;
mod fit;
mod folder_picker;
mod held;
mod host_archived;
mod host_fleet;
mod hosts;
mod layouts;
mod lists;
mod new_agent;
mod notices;
mod permission;
mod queued;
mod room;
mod scale;
mod schedules;
mod screenshots;
mod tab_overflow;
mod tabs;
mod terminal;
mod timeline;
mod track;
mod trips;
mod undo;
mod wake;
mod windows;
mod words;
mod workspace_names;
mod workspaces;
