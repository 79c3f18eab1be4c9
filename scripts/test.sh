#!/usr/bin/env bash
# Sets up this machine (scripts/setup.sh) and runs every check: formatting (Rust, and the UI's
# JavaScript through scripts/fmt-ui.sh), clippy and all tests
# (unit, Tauri mock-runtime, and end-to-end in the real webview under private Xvfb displays).
# Only `cargo test` builds the app in target/debug: `cargo build` resolves different features and
# would build the heavy stack a second time. tests/package.rs builds the release package in
# target/release through scripts/package.sh (once; minutes from clean).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

cargo fmt --all --check
scripts/fmt-ui.sh --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
