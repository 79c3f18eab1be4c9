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

tauri=target/tauri-cli/node_modules/.bin/tauri
target=${CARGO_TARGET_DIR:-target}

if [ -n "${PASEO_PACKAGE_BINARIES:-}" ]; then
  # Packages binaries already built in that folder instead of building them: the package test
  # passes target/debug, the very binaries the rest of the suite built and ran (the app is always
  # built in production mode: Cargo.toml turns on tauri/custom-protocol), so a fresh machine does
  # not compile the whole stack a second time for it. `tauri build` is `cargo build` followed by
  # `tauri bundle`; this runs the second half on stripped copies (as the release profile strips),
  # in a target folder of their own so the originals stay untouched. The package lands in
  # target/package-prebuilt/debug/bundle/deb.
  stage="$target/package-prebuilt"
  mkdir -p "$stage/debug"
  for bin in paseo-desktop paseo-headless; do
    if [ ! -x "$PASEO_PACKAGE_BINARIES/$bin" ]; then
      echo "[package] $PASEO_PACKAGE_BINARIES/$bin is not there: build it first (cargo test --no-run)" >&2
      exit 1
    fi
    strip --strip-all -o "$stage/debug/$bin" "$PASEO_PACKAGE_BINARIES/$bin"
  done
  CARGO_TARGET_DIR="$stage" "$tauri" bundle --debug --bundles deb --ci "$@"
  target=$stage
  profile=debug
else
  # PASEO_PACKAGE_PROFILE picks another cargo profile; the package then lands in
  # target/<profile>/bundle/deb.
  profile=${PASEO_PACKAGE_PROFILE:-release}
  cargo_args=(--locked)
  [ "$profile" = release ] || cargo_args+=(--profile "$profile")
  # Only the .deb: AppImage tooling is downloaded at build time, which is out of scope here.
  "$tauri" build --bundles deb --ci "$@" -- "${cargo_args[@]}"
fi

pkgid=$(cargo pkgid --locked -p paseo-desktop) # path+file:///…#paseo-desktop@0.1.0
version=${pkgid##*[#@]}
deb="$target/$profile/bundle/deb/Paseo_${version}_$(dpkg --print-architecture).deb"
if [ ! -f "$deb" ]; then
  echo "[package] expected $deb but it is not there" >&2
  exit 1
fi
printf '[package] %s (%s KiB)\n[package] install: sudo apt install ./%s\n' \
  "$deb" "$(($(stat -c %s "$deb") / 1024))" "$deb" >&2
