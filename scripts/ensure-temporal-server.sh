#!/usr/bin/env bash
# Prints the directory that holds a real Temporal server at the version docker-compose.yml pins:
#   DIR/temporal-server, DIR/temporal-sql-tool, DIR/schema/postgresql/v12/{temporal,visibility}
# Logs go to stderr, so callers can do `dir="$(bash scripts/ensure-temporal-server.sh)"`.
# Built once from go.temporal.io/server through the Go module proxy (about 8 minutes on 2 cores) into
# ${GOALRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/goalrun}/bin/temporal-server-<version>/, and
# reused from there. The version comes from the compose file, so the test runs what compose runs.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
log() { printf 'ensure-temporal-server: %s\n' "$*" >&2; }

# The one pin: `temporalio/server:${TEMPORAL_VERSION:-X}` in docker-compose.yml (TEMPORAL_VERSION wins).
pinned="$(sed -n 's/.*temporalio\/server:\${TEMPORAL_VERSION:-\([0-9][0-9.]*\)}.*/\1/p' "$repo/docker-compose.yml" | head -n 1)"
version="${TEMPORAL_VERSION:-$pinned}"
[ -n "$version" ] || { log "error: no temporalio/server pin found in docker-compose.yml"; exit 1; }
module="go.temporal.io/server"

cache="${GOALRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/goalrun}"
dir="$cache/bin/temporal-server-$version"
ready() { [ -x "$dir/temporal-server" ] && [ -x "$dir/temporal-sql-tool" ] && [ -d "$dir/schema/postgresql/v12" ]; }
if ready; then
  log "using $dir (cached)"
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { log "error: $dir is missing and 'go' is not installed to build it"; exit 1; }

# One build at a time: a second caller waits for the first (a stale lock, whose owner is gone, is taken).
mkdir -p "$cache/bin"
lock="$cache/temporal-server-build.lock.d"
for _ in $(seq 1 1800); do
  if mkdir "$lock" 2>/dev/null; then echo $$ >"$lock/pid"; break; fi
  owner="$(cat "$lock/pid" 2>/dev/null || true)"
  if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then rm -rf "$lock"; continue; fi
  sleep 2
done
[ -f "$lock/pid" ] && [ "$(cat "$lock/pid")" = $$ ] || { log "error: timed out waiting for $lock"; exit 1; }
work="$(mktemp -d "$cache/server-build.XXXXXX")"
trap 'rm -rf "$work" "$lock"' EXIT
if ready; then echo "$dir"; exit 0; fi

export GOFLAGS=-mod=mod GOWORK=off GO111MODULE=on CGO_ENABLED=0
log "building Temporal server v$version from the Go module proxy into $dir (once; about 8 minutes on 2 cores)"
# The module's source (for the schemas, and for go build should go install refuse the module).
source_dir="$(cd "$work" && go mod download -json "$module@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -d "$source_dir" ] || { log "error: go mod download $module@v$version gave no source dir"; exit 1; }
mkdir -p "$work/out"
if ! (cd "$work" && GOBIN="$work/out" go install "$module/cmd/server@v$version" "$module/cmd/tools/sql@v$version"); then
  # go install refuses a module whose go.mod has replace directives: build inside a copy of it.
  log "go install failed; building inside a copy of the module source"
  cp -r "$source_dir" "$work/src" && chmod -R u+w "$work/src"
  (cd "$work/src" && go build -o "$work/out/server" ./cmd/server && go build -o "$work/out/sql" ./cmd/tools/sql)
fi
mkdir -p "$work/final/schema/postgresql"
mv "$work/out/server" "$work/final/temporal-server"
mv "$work/out/sql" "$work/final/temporal-sql-tool"
cp -r "$source_dir/schema/postgresql/v12" "$work/final/schema/postgresql/v12"
chmod -R u+w "$work/final"
"$work/final/temporal-sql-tool" --help >/dev/null
rm -rf "$dir"
mv "$work/final" "$dir"
log "installed Temporal server v$version in $dir"
echo "$dir"
