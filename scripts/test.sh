#!/usr/bin/env bash
# Sets up this machine (scripts/setup.sh) and runs every check: formatting (Rust, and the UI's
# JavaScript through scripts/fmt-ui.sh), clippy and all tests
# (unit, Tauri mock-runtime, and end-to-end in the real webview under private Xvfb displays).
# Only `cargo test` builds the app in target/debug: `cargo build` resolves different features and
# would build the heavy stack a second time. tests/package.rs bundles the Debian package from the
# binaries built here (scripts/package.sh with PASEO_PACKAGE_BINARIES, in target/package-prebuilt).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

cargo fmt --all --check
scripts/fmt-ui.sh --check

# Clippy lints the workspace's own crates while they are compiled for the tests, instead of in a
# `cargo clippy` pass of its own: that pass is `cargo check` with clippy-driver wrapping rustc for
# workspace members (RUSTC_WORKSPACE_WRAPPER, CLIPPY_ARGS), and its check-mode build of every
# dependency shares nothing with the test build (a fresh machine compiled 15.9 min in the two, 12.9 now).
# The same lints, the same `-D warnings`, over the same targets (every one: the benches here,
# the examples, built as plain binaries, by `cargo test` itself); the artifacts are plain rustc
# output (clippy-driver only adds lint passes), and `cargo test` reuses them because it runs with
# the same wrapper.
export RUSTC_WORKSPACE_WRAPPER
RUSTC_WORKSPACE_WRAPPER=$(command -v clippy-driver) || {
  echo "[test] clippy-driver is not installed: rustup component add clippy" >&2
  exit 1
}
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
cargo test --workspace --lib --bins --tests --benches --locked --no-run
cargo test --workspace --locked
