#!/usr/bin/env bash
# Crash soak (not part of scripts/test.sh), two parts:
# 1. records: the crash-safety test with many more random SIGKILLs of a process rewriting agent
#    records through the real writer. Prints kills, torn records and lost records.
# 2. notices: rounds of a whole app (the runtime with a shell parent and four shell subagents
#    armed to notify it) SIGKILLed at a random moment around the subagents' ends, then started
#    again: every subagent must have left exactly one finish notice (SPEC 4). Prints the armed
#    turns, lost and doubled notices.
# Exits non-zero if any record was torn or lost, or any notice lost or doubled.
#
#   scripts/soak.sh [KILLS] [NOTICE_ROUNDS]
#     KILLS: record kills (default 1000; each about 0.1 to 0.2 s)
#     NOTICE_ROUNDS: notice rounds (default 200; each about 0.3 s)
set -uo pipefail
cd "$(dirname "$0")/.."
kills="${1:-1000}"
rounds="${2:-200}"
for n in "$kills" "$rounds"; do
  case "$n" in
    ''|*[!0-9]*) echo "usage: $0 [KILLS] [NOTICE_ROUNDS]" >&2; exit 2 ;;
  esac
done
PASEO_CRASH_KILLS="$kills" cargo test -p paseo-core --test crash_safety \
  records_survive_sigkill_at_random_moments -- --exact --nocapture 2>&1 \
  | grep -E "^(kills:|round |test result|thread |error)"
records=${PIPESTATUS[0]}
PASEO_NOTICE_ROUNDS="$rounds" cargo test -p paseo-core --test notice_crash \
  notices_survive_sigkill_of_the_app_exactly_once -- --exact --nocapture 2>&1 \
  | grep -E "^(notice rounds:|test result|thread |error)|notices per child \[.*[02-9]"
notices=${PIPESTATUS[0]}
if [ "$records" -eq 0 ] && [ "$notices" -eq 0 ]; then
  echo "soak passed"
  exit 0
fi
echo "soak FAILED (records: exit $records, notices: exit $notices)" >&2
exit 1
