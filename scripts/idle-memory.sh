#!/usr/bin/env bash
# Memory of the app and its WebKit processes, each figure against the idle baseline measured in
# the same run (SPEC 12, docs/scale.md): starts BINARY on a private Xvfb display with a temp
# PASEO_HOME — first an empty one (idle), then one seeded with each count of RECORDS agent
# records (`seed_records`: trees over 20 workspaces, a model and a 600-character system prompt
# each, none archived) — waits for the window (or, with --headless, for mcp.json), lets it
# settle, then sums PSS (and RSS) over the app's process tree from /proc/PID/smaps_rollup.
#   scripts/idle-memory.sh [BINARY] [SETTLE_SECONDS] [RECORDS[,RECORDS…]] [--headless]
# e.g. scripts/idle-memory.sh target/release/paseo-desktop 10 10000,100000
# SEED_ARGS (e.g. "--shared-prompts") is passed to seed_records; SEED_BIN names a built
# seed_records to use instead of `cargo run --release`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/paseo-desktop}
settle=${2:-10}
counts=${3:-0}
mode=${4:-}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --release)" >&2; exit 1; }

exec 3< <(Xvfb -displayfd 1 -noreset -screen 0 1280x800x24 -nolisten tcp 2>/dev/null & echo "pid $!")
read -r _ xvfb_pid <&3
read -r display <&3
home=''
app_pid=''
cleanup() {
  [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null
  kill "$xvfb_pid" 2>/dev/null || true
  [ -n "$home" ] && rm -rf "$home"
  return 0
}
trap cleanup EXIT

seed() {
  if [ -n "${SEED_BIN:-}" ]; then
    # shellcheck disable=SC2086
    "$SEED_BIN" "$1" "$2" ${SEED_ARGS:-} >&2
  else
    # shellcheck disable=SC2086
    cargo run -q --release -p paseo-core --example seed_records -- "$1" "$2" ${SEED_ARGS:-} >&2
  fi
}

tree() { echo "$1"; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done; }
kib() { awk -v k="$2:" '$1 == k {print $2}' /proc/"$1"/smaps_rollup; }

# Starts the app on a data root with $1 records and sets app_pss, webkit_pss, total_rss (KiB).
measure() {
  home=$(mktemp -d)
  [ "$1" -gt 0 ] && seed "$home" "$1"
  DISPLAY=:$display PASEO_HOME=$home DBUS_SESSION_BUS_ADDRESS=disabled: NO_AT_BRIDGE=1 "$bin" $mode >/dev/null 2>&1 &
  app_pid=$!
  for _ in $(seq 600); do
    if [ "$mode" = --headless ]; then
      [ -f "$home/mcp.json" ] && break
    else
      DISPLAY=:$display xdotool search --onlyvisible --name '^Paseo$' >/dev/null 2>&1 && break
    fi
    sleep 0.1
  done
  sleep "$settle"
  app_pss=0; webkit_pss=0; total_rss=0
  for p in $(tree "$app_pid"); do
    local pss rss
    pss=$(kib "$p" Pss); rss=$(kib "$p" Rss)
    printf '  %-8s %-24s RSS %8s KiB  PSS %8s KiB\n' "$p" "$(cat /proc/"$p"/comm)" "$rss" "$pss"
    if [ "$p" = "$app_pid" ]; then app_pss=$pss; else webkit_pss=$((webkit_pss + pss)); fi
    total_rss=$((total_rss + rss))
  done
  kill "$app_pid" 2>/dev/null; wait "$app_pid" 2>/dev/null || true
  app_pid=''
  rm -rf "$home"; home=''
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
mib() { echo $(($1 / 1024)); }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "binary: $bin ($(stat -c %s "$bin") bytes)${mode:+ $mode}; settle ${settle}s"
echo "idle (empty data root), load average $(cut -d' ' -f1-3 /proc/loadavg):"
measure 0
idle_app=$app_pss; idle_webkit=$webkit_pss; idle_total=$((app_pss + webkit_pss))
rows=("$(printf '%-9s %9s %10s %10s %9s' idle "$(mib $idle_app)" "$(mib $idle_webkit)" "$(mib $idle_total)" 1.00)")
for n in ${counts//,/ }; do
  [ "$n" -gt 0 ] || continue
  echo "$n records, load average $(cut -d' ' -f1-3 /proc/loadavg):"
  measure "$n"
  total=$((app_pss + webkit_pss))
  rows+=("$(printf '%-9s %9s %10s %10s %9s   (app %s×, WebKit %s×, RSS %s MiB)' "$n" "$(mib $app_pss)" \
    "$(mib $webkit_pss)" "$(mib $total)" "$(ratio $total $idle_total)" "$(ratio $app_pss $idle_app)" \
    "$(ratio $webkit_pss $idle_webkit)" "$(mib $total_rss)")")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %9s %10s %10s %9s\n' records app_PSS webkit_PSS total_PSS "×idle"
printf '%s\n' "${rows[@]}"
echo "(MiB; ×idle = total PSS over the idle total PSS of this run)"
