#!/usr/bin/env bash
# npm run test:upgrade [-- --record]: goals started by the previous release's workers finish on this
# build's (test/upgrade/upgrade.test.ts). The release is built once, cached by commit outside the repo
# (scripts/release-build.js). --record also saves the goals' histories at the old build into
# test/fixtures/histories/<release>/ (never overwriting one). GOALRUN_UPGRADE_SKIP_BUILD=1 skips
# this checkout's build (CI has just built it for the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
record=0
for arg in "$@"; do
  case "$arg" in
    --record) record=1 ;;
    *) echo "test:upgrade: unknown option $arg (only --record)" >&2; exit 2 ;;
  esac
done
[ "${GOALRUN_UPGRADE_SKIP_BUILD:-}" = 1 ] || npm run build
TEMPORAL_CLI_PATH="${TEMPORAL_CLI_PATH:-$(bash scripts/ensure-temporal.sh)}"
export TEMPORAL_CLI_PATH
started=$(date +%s)
GOALRUN_UPGRADE_RECORD=$record npx vitest run --config test/upgrade/vitest.config.mts
echo "test:upgrade took $(( $(date +%s) - started )) s"
