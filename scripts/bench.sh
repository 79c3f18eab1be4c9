#!/usr/bin/env bash
# Every scale figure (docs/scale.md), each against its baseline from the same run, in one command:
#   scripts/bench.sh [--quick]
# launch (whole process, 10,000 / 100,000 records, against a plain read loop), listing (one
# 10,000-agent list_agents over MCP, against serializing the full snapshots), memory of the
# window with 100,000 records (against the idle window), scrolling the window's lists (frames
# against the 50 ms budget), and 20 agents streaming for 10 minutes (memory against the idle
# window, CPU), and hosts (a host agent's first output, reconnect, a host's 10,000 agents listed,
# the memory of 3 hosts; real sshd on loopback, needs root). Full outputs go to
# target/bench/*.log; the summary at the end is their figure lines. --quick: 10,000 records only
# and a 2-minute stream soak (a smoke run, not the figures).
# Not part of scripts/test.sh: it runs ≈ 30 minutes and wants an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=${1:-}
sizes="10000 100000"
minutes=10
if [ "$quick" = --quick ]; then
  sizes="10000"
  minutes=2
fi
out=target/bench
mkdir -p "$out"

echo "building (release)…"
cargo build --release --locked --bins
cargo build --release --locked -p paseo-core --example seed_records
cargo bench --locked --no-run --bench launch --bench scroll --bench stream_soak --bench hosts 2>/dev/null
cargo bench --locked --no-run -p paseo-core --bench listing 2>/dev/null

run() {
  local name=$1
  shift
  echo
  echo "== $name: $*"
  "$@" 2>&1 | tee "$out/$name.log"
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
  "$(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
run launch cargo bench --locked --bench launch -- $sizes
run listing cargo bench --locked -p paseo-core --bench listing
biggest=${sizes##* }
run memory env SEED_BIN=target/release/examples/seed_records \
  scripts/idle-memory.sh target/release/paseo-desktop 10 "$biggest"
# shellcheck disable=SC2086
run scroll cargo bench --locked --bench scroll -- $sizes
run stream_soak cargo bench --locked --bench stream_soak -- --minutes "$minutes"
run hosts cargo bench --locked --bench hosts

echo
echo "== summary (each figure against its baseline from this run; full logs in $out/)"
grep -h -E '×|target|within|frames over|frame interval|slope|CPU|load average' \
  "$out/launch.log" "$out/listing.log" "$out/memory.log" "$out/scroll.log" "$out/stream_soak.log" "$out/hosts.log" \
  | grep -v -E '^(running|test ) |^ +(Finished|Running|Compiling) ' || true
