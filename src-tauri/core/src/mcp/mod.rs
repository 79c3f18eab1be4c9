//! The app's MCP server (SPEC 8): streamable HTTP on 127.0.0.1, built on the official Rust SDK
//! (`rmcp`), through which agents create, prompt, wait for and archive agents.

pub mod input;
pub mod tokens;
