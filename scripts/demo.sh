#!/usr/bin/env bash
# Builds goalrun, makes sure the `temporal` binary exists, and runs `goalrun demo` on the embedded
# defaults (an embedded PostgreSQL under ~/.goalrun, a local Temporal dev server started in the background).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build --silent
TEMPORAL_CLI_PATH="$(bash scripts/ensure-temporal.sh)"
export TEMPORAL_CLI_PATH
exec node dist/cli/main.js demo "$@"
