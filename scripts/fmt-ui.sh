#!/usr/bin/env bash
# Formats the UI's JavaScript (ui/**/*.js) with prettier, pinned in scripts/fmt/ (package.json
# and its lock) and installed by scripts/setup.sh into target/ui-format; the style is
# scripts/fmt/prettierrc.json (110 columns, single quotes, as the code is written).
#
#   scripts/fmt-ui.sh            format in place
#   scripts/fmt-ui.sh --check    change nothing; fail naming every file that is not formatted
#                                (scripts/test.sh runs this)
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "") mode=--write ;;
  --check) mode=--check ;;
  *) echo "fmt-ui: unknown option '$1' (expected --check or nothing)" >&2; exit 2 ;;
esac

prettier=target/ui-format/node_modules/.bin/prettier
if [ ! -x "$prettier" ]; then
  echo "fmt-ui: $prettier is missing: run scripts/setup.sh" >&2
  exit 1
fi
exec "$prettier" --config scripts/fmt/prettierrc.json --no-editorconfig --log-level warn "$mode" 'ui/**/*.js'
