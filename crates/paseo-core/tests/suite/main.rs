//! The core's integration tests that can share a process, as one test binary: one module per
//! subject (each was a binary of its own; one binary compiles and links the support code and
//! the core's generics once, which a fresh machine's suite feels in minutes). Run one subject
//! with a filter: `cargo test -p paseo-core --test suite worktrees::`.
//!
//! What must not share a process stays a binary of its own in `tests/`: tests that change the
//! process's environment (`git_identity`, `git_missing`, `containment_unavailable`, `redteam`),
//! its limits or its allocator (`load_50k`, `heap_arenas`), measure its memory (`nothing_lost`,
//! `shell_command`), or run their own binary again as the process they crash (`crash_safety`,
//! `durability`, `no_orphans`, `notice_crash`).

#[path = "../support/mod.rs"]
mod support;

mod api;
mod budget;
mod budget_spent_props;
mod changes;
mod claude;
mod codex;
mod containment;
mod lifecycle_gaps;
mod lifecycle_life;
mod lifecycle_props;
mod live_room;
mod mcp_agents;
mod one_door;
mod preload;
mod runtime_providers;
mod schedules;
mod start_timeout;
mod usage;
mod window_cards;
mod worktree_siblings;
mod worktrees;
