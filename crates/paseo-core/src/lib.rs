//! paseo-core: the lifecycle engine, durable storage, agent providers and MCP server of Paseo
//! Desktop. No Tauri dependency: the desktop shell and headless mode both drive it through
//! [`server`]'s one door.

// Lets unit tests include the integration tests' support files, which name the crate.
#[cfg(test)]
extern crate self as paseo_core;

pub mod api;
pub mod config;
pub mod engine;
pub mod hosts;
pub mod mcp;
pub mod model;
pub mod providers;
pub mod runtime;
pub mod sandbox;
pub mod schedules;
pub mod server;
pub mod store;
pub mod workspaces;
