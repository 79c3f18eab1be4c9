#!/usr/bin/env bash
# Crash soak (not part of scripts/test.sh): the crash-safety test with many more random SIGKILLs
# of a process rewriting agent records through the real writer. Prints kills, torn records and
# lost records; exits non-zero if any record was torn or lost.
#
#   scripts/soak.sh [KILLS]     (default 1000; each kill takes about 0.1 to 0.2 s)
set -uo pipefail
cd "$(dirname "$0")/.."
kills="${1:-1000}"
case "$kills" in
  ''|*[!0-9]*) echo "usage: $0 [KILLS]" >&2; exit 2 ;;
esac
PASEO_CRASH_KILLS="$kills" cargo test -p paseo-core --test crash_safety \
  records_survive_sigkill_at_random_moments -- --exact --nocapture 2>&1 \
  | grep -E "^(kills:|round |test result|thread |error)"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && echo "soak passed" || echo "soak FAILED" >&2
exit "$status"
