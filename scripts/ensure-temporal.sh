#!/usr/bin/env bash
# Prints the absolute path of a usable `temporal` CLI binary on stdout (logs on stderr), so callers can
# do `TEMPORAL="$(bash scripts/ensure-temporal.sh)"`. The lookup and install order (TEMPORAL_CLI_PATH,
# PATH, the goalrun cache, the Temporal SDK's official download, go install) is in ensure-temporal.js.
set -euo pipefail
exec node "$(dirname "$0")/ensure-temporal.js" "$@"
