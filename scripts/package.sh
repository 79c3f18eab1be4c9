#!/usr/bin/env bash
# Builds the Debian package target/release/bundle/deb/Paseo_<version>_<arch>.deb with Tauri's own
# bundler (@tauri-apps/cli 2 in target/tauri-cli, installed by scripts/setup.sh --package): a release build with
# the production protocol (`tauri build` turns on tauri/custom-protocol) and stripped symbols
# ([profile.release] in Cargo.toml), then the .deb with the binary, the launcher entry and the
# icons. Install it with
#
#   sudo apt install ./target/release/bundle/deb/Paseo_*.deb
#
# Extra arguments go to `tauri build` (e.g. --verbose).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --package
export PATH="$HOME/.cargo/bin:$PATH"

# PASEO_PACKAGE_PROFILE picks another cargo profile (the package test uses `package-test`, see
# Cargo.toml); the package then lands in target/<profile>/bundle/deb.
profile=${PASEO_PACKAGE_PROFILE:-release}
cargo_args=(--locked)
[ "$profile" = release ] || cargo_args+=(--profile "$profile")

# Only the .deb: AppImage tooling is downloaded at build time, which is out of scope here.
target/tauri-cli/node_modules/.bin/tauri build --bundles deb --ci "$@" -- "${cargo_args[@]}"

target=${CARGO_TARGET_DIR:-target}
pkgid=$(cargo pkgid --locked -p paseo-desktop) # path+file:///…#paseo-desktop@0.1.0
version=${pkgid##*[#@]}
deb="$target/$profile/bundle/deb/Paseo_${version}_$(dpkg --print-architecture).deb"
if [ ! -f "$deb" ]; then
  echo "[package] expected $deb but it is not there" >&2
  exit 1
fi
printf '[package] %s (%s KiB)\n[package] install: sudo apt install ./%s\n' \
  "$deb" "$(($(stat -c %s "$deb") / 1024))" "$deb" >&2
