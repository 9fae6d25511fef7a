#!/usr/bin/env bash
# npm run bench:smoke: every benchmark (scripts/bench-*.js, the package.json bench* scripts) once, with
# tiny sizes. A smoke run, not a measurement: it checks that each one still finishes (a scripted goal
# the runaway breaker pauses would leave a benchmark waiting forever), and prints each one's time.
# Each gets BENCH_SMOKE_TIMEOUT seconds (default 300). Runs all of them, then exits 1 if any failed.
# GOALRUN_BENCH_SKIP_BUILD=1 skips the build (CI has just built this checkout for the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${BENCH_SMOKE_TIMEOUT:-300}"
[ "${GOALRUN_BENCH_SKIP_BUILD:-}" = 1 ] || npm run build
TEMPORAL_CLI_PATH="${TEMPORAL_CLI_PATH:-$(bash scripts/ensure-temporal.sh)}"
export TEMPORAL_CLI_PATH

# name, then the command: the script and its tiny sizes. The goals take more steps than the runaway
# breaker's repeat limit (5), so one whose calls repeat is paused here as it would be at full size.
benches=(
  "bench|scripts/bench-step-overhead.js --steps 8 --repeat 1"
  "bench --concurrent|scripts/bench-step-overhead.js --concurrent 3 --steps 8 --delay-ms 0 --floor-io"
  "bench:floor|scripts/bench-floor.js --activities 3 --repeat 1 --only default,goalrun-sqlite-file"
  "bench:cli|scripts/bench-cli.js --repeat 1"
  "bench:sandbox|scripts/bench-sandbox.js 2"
  "bench:store|scripts/bench-store-scale.js --steps 10 --repeat 1 --sessions 5 --events 500 --messages 100"
  "bench:cache|scripts/bench-cache.js --steps 4"
  "bench-glob|scripts/bench-glob.js 1 0.02"
  "bench-memory-search|scripts/bench-memory-search.js --messages 500 --sessions 5 --repeat 2"
  "bench-prune|scripts/bench-prune.js"
  "bench-snapshots|scripts/bench-snapshots.js 100 1"
  "bench-stack-capture|scripts/bench-stack-capture.js --rounds 1 --histories 5"
  "bench-spawn|scripts/bench-spawn.js --rounds 1 --calls 3"
  "bench-serve|scripts/bench-serve.js --goals 5 --requests 3"
  "bench-vm-timeout|scripts/bench-vm-timeout.js --calls 200 --rounds 1"
  "bench-worker-start|scripts/bench-worker-start.js --rounds 1"
)

failed=()
all_started=$(date +%s)
for entry in "${benches[@]}"; do
  name="${entry%%|*}"
  read -r -a command <<<"${entry#*|}"
  printf '\n--> %s: node %s\n' "$name" "${command[*]}"
  started=$(date +%s)
  status=0
  # --kill-after: a benchmark still cleaning up 10 s after the TERM is killed.
  timeout --kill-after=10 "$limit" node "${command[@]}" || status=$?
  took=$(( $(date +%s) - started ))
  if [ "$status" -eq 0 ]; then
    printf -- '--> %s: finished in %ss\n' "$name" "$took"
  else
    [ "$status" -eq 124 ] && why="timed out after ${limit}s" || why="exit $status"
    printf -- '--> %s: FAILED (%s) after %ss\n' "$name" "$why" "$took"
    failed+=("$name")
  fi
done

echo "bench:smoke took $(( $(date +%s) - all_started ))s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "bench:smoke: failed: ${failed[*]}" >&2
  exit 1
fi
