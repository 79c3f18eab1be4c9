#!/usr/bin/env bash
# Sets up this machine (scripts/setup.sh) and runs every check: formatting, clippy and all tests
# (unit, Tauri mock-runtime, and end-to-end in the real webview under private Xvfb displays).
# Only `cargo test` builds the app: `cargo build` resolves different features and would build
# the heavy stack a second time.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

# paseo-core joins the format check once its files are rustfmt-clean (then: cargo fmt --all --check).
cargo fmt -p paseo-desktop --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
