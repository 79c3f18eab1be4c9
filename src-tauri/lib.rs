//! The Tauri shell of Paseo Desktop (filled in by the foundation work).
pub use paseo_core;
