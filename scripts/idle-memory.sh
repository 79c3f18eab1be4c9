#!/usr/bin/env bash
# Idle memory of the app and its WebKit processes: starts BINARY (default the release build) on a
# private Xvfb display with a temp PASEO_HOME, waits for the window, lets it settle, then sums RSS
# and PSS over the app's process tree from /proc/PID/smaps_rollup. With RECORDS > 0 the data root
# is first seeded with that many agent records (SPEC 12: memory with 10,000 records loaded).
#   scripts/idle-memory.sh [BINARY] [SETTLE_SECONDS] [RECORDS] [--headless]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/paseo-desktop}
settle=${2:-10}
records=${3:-0}
mode=${4:-}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --release)" >&2; exit 1; }

home=$(mktemp -d)
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp 2>/dev/null & echo "pid $!")
read -r _ xvfb_pid <&3
read -r display <&3
cleanup() { kill "${app_pid:-}" 2>/dev/null || true; kill "$xvfb_pid" 2>/dev/null || true; rm -rf "$home"; }
trap cleanup EXIT
if [ "$records" -gt 0 ]; then
  cargo run -q --release -p paseo-core --example seed_records -- "$home" "$records" >&2
fi

DISPLAY=:$display PASEO_HOME=$home DBUS_SESSION_BUS_ADDRESS=disabled: NO_AT_BRIDGE=1 "$bin" $mode >/dev/null 2>&1 &
app_pid=$!
for _ in $(seq 300); do
  if [ "$mode" = --headless ]; then
    [ -f "$home/mcp.json" ] && break
  else
    DISPLAY=:$display xdotool search --onlyvisible --name '^Paseo$' >/dev/null 2>&1 && break
  fi
  sleep 0.1
done
sleep "$settle"

tree() { echo "$1"; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done; }
total_rss=0; total_pss=0
printf '%-8s %-24s %10s %10s\n' pid process rss_kib pss_kib
for p in $(tree "$app_pid"); do
  rss=$(awk '/^Rss:/{print $2}' /proc/"$p"/smaps_rollup)
  pss=$(awk '/^Pss:/{print $2}' /proc/"$p"/smaps_rollup)
  printf '%-8s %-24s %10s %10s\n' "$p" "$(cat /proc/"$p"/comm)" "$rss" "$pss"
  total_rss=$((total_rss + rss)); total_pss=$((total_pss + pss))
done
printf 'total: RSS %d MiB, PSS %d MiB\n' $((total_rss / 1024)) $((total_pss / 1024))
