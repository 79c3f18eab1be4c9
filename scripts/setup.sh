#!/usr/bin/env bash
# Idempotent setup for building, running and testing Paseo Desktop on Debian 12 / Ubuntu 24.04.
# Installs only what is missing: system packages (apt), tauri-cli (npm) and tauri-driver, the pinned
# agent CLIs that the provider tests drive and the UI's formatter (into project-local folders,
# never globally).
#
#   scripts/setup.sh            everything (build, package, tests)
#   scripts/setup.sh --run      only what building and running the app needs
#   scripts/setup.sh --package  what building the Debian package needs (scripts/package.sh)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-all}

log() { printf '[setup] %s\n' "$*" >&2; }

case "$mode" in
  all | --run | --package) ;;
  *) log "unknown option '$mode' (expected --run, --package or nothing)"; exit 2 ;;
esac
export PATH="$HOME/.cargo/bin:$PATH"

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
    log "not root and no sudo: install the packages listed in scripts/setup.sh by hand"; fi
fi

# Packages needed to build and run the app.
run_pkgs=(
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libsoup-3.0-dev libjavascriptcoregtk-4.1-dev build-essential pkg-config libssl-dev
  git curl ca-certificates file bubblewrap
)
# Packages the tests need in addition: a virtual display, window automation, the WebKit
# WebDriver, screenshots, a session bus for the tray, fonts, .desktop validation (the package
# test), npm for the CLIs, rsvg-convert for scripts/icons.sh, and perl (Time::HiRes) for the UI
# tests' and benchmark's paced output, strace for the durability test's syscall order, and
# OpenSSH (server and client) for the hosts tests' real sshd on loopback.
test_pkgs=(
  xvfb xauth xdotool imagemagick webkit2gtk-driver dbus-x11 dbus x11-utils
  fonts-dejavu-core desktop-file-utils libglib2.0-bin procps nodejs npm librsvg2-bin perl strace
  openssh-server openssh-client
)

pkgs=("${run_pkgs[@]}")
[ "$mode" = all ] && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  # nodejs/npm may come from elsewhere (nvm, NodeSource): a working binary is enough.
  case "$p" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "system packages present"
fi

if [ "$mode" = "--run" ]; then exit 0; fi

# tauri-cli: Tauri's bundler, which builds the Debian package. The npm registry ships it prebuilt
# (@tauri-apps/cli, the same CLI as the crate: compiling it took 12 of a fresh machine's 28
# minutes), pinned to 2.x like the tauri crates (3.0 alphas exist), in a project-local folder.
# scripts/package.sh runs target/tauri-cli/node_modules/.bin/tauri.
tauri_cli_ver=2.12.5
tauri_cli_dir="$here/target/tauri-cli"
if [ "$(cat "$tauri_cli_dir/.installed" 2>/dev/null)" != "$tauri_cli_ver" ] \
  || ! "$tauri_cli_dir/node_modules/.bin/tauri" --version >/dev/null 2>&1; then
  log "installing @tauri-apps/cli $tauri_cli_ver into $tauri_cli_dir"
  mkdir -p "$tauri_cli_dir"
  [ -f "$tauri_cli_dir/package.json" ] || echo '{"name":"paseo-tauri-cli","private":true}' >"$tauri_cli_dir/package.json"
  (cd "$tauri_cli_dir" && npm install --no-audit --no-fund --loglevel=error \
    "@tauri-apps/cli@$tauri_cli_ver" >/dev/null)
  echo "$tauri_cli_ver" >"$tauri_cli_dir/.installed"
fi
if [ "$mode" = "--package" ]; then exit 0; fi

# tauri-driver: the WebDriver bridge the end-to-end tests use (pinned to 2.x; 3.0 alphas exist).
if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
  log "installing tauri-driver"
  cargo install tauri-driver --version "^2" --locked --quiet
fi

# The real agent CLIs for the provider tests, pinned, in a project-local folder.
cli_dir="$here/target/agent-clis"
claude_ver=2.1.332
codex_ver=0.171.0
want="claude-code@$claude_ver codex@$codex_ver"
if [ "$(cat "$cli_dir/.installed" 2>/dev/null)" != "$want" ] || [ ! -x "$cli_dir/node_modules/.bin/claude" ]; then
  log "installing agent CLIs into $cli_dir ($want)"
  mkdir -p "$cli_dir"
  [ -f "$cli_dir/package.json" ] || echo '{"name":"paseo-agent-clis","private":true}' >"$cli_dir/package.json"
  (cd "$cli_dir" && npm install --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$claude_ver" "@openai/codex@$codex_ver" >/dev/null)
  echo "$want" >"$cli_dir/.installed"
else
  log "agent CLIs present"
fi

# The UI's formatter (scripts/fmt-ui.sh), pinned by scripts/fmt/package-lock.json, in a
# project-local folder like the CLIs.
fmt_dir="$here/target/ui-format"
if ! cmp -s "$here/scripts/fmt/package-lock.json" "$fmt_dir/package-lock.json" \
  || [ ! -x "$fmt_dir/node_modules/.bin/prettier" ]; then
  log "installing the UI formatter into $fmt_dir"
  mkdir -p "$fmt_dir"
  cp "$here/scripts/fmt/package.json" "$here/scripts/fmt/package-lock.json" "$fmt_dir/"
  (cd "$fmt_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
else
  log "UI formatter present"
fi
log "done"
