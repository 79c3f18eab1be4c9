#!/usr/bin/env bash
# Sets up this machine (scripts/setup.sh) and runs every check: formatting, clippy and all tests
# (unit, Tauri mock-runtime, and end-to-end in the real webview under private Xvfb displays).
# Only `cargo test` builds the app: `cargo build` resolves different features and would build
# the heavy stack a second time.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
