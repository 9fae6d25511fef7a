#!/usr/bin/env bash
# Prints the absolute path of a usable `temporal` CLI binary on stdout; every log line goes to stderr,
# so callers can do `TEMPORAL="$(bash scripts/ensure-temporal.sh)"`.
#
# Lookup order (cli/temporal-binary.ts follows the same order, without building):
#   1. $TEMPORAL_CLI_PATH, if set and executable
#   2. `temporal` on PATH
#   3. the goalrun cache: ${GOALRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/goalrun}/bin/temporal
#   4. otherwise build it into the cache with `go install` through the Go module proxy, which works on
#      machines that can reach proxy.golang.org but not GitHub releases.
#
# Idempotent, and safe to run twice at once: the build holds a lock in the cache dir and installs
# through a temp dir plus rename, so nobody ever sees a half-written binary.
set -euo pipefail

# v1.5.1 is the newest CLI tag whose go.mod has no `replace` directive; later tags cannot be built with
# `go install module@version`. The others are fallbacks in case a tag stops resolving on the proxy.
readonly CLI_MODULE='github.com/temporalio/cli/cmd/temporal'
readonly CLI_VERSIONS=('v1.5.1' 'v1.5.0' 'v1.4.1')
readonly MIN_GO_MINOR=25 # the CLI's go.mod says `go 1.25.0`
readonly LOCK_WAIT_SECONDS=1800

log() { printf 'ensure-temporal: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}
is_executable_file() { [[ -f "$1" && -x "$1" ]]; }
absolute_path() { (cd "$(dirname -- "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename -- "$1")"); }

if [[ -n "${TEMPORAL_CLI_PATH:-}" ]]; then
  if is_executable_file "$TEMPORAL_CLI_PATH"; then
    absolute_path "$TEMPORAL_CLI_PATH"
    exit 0
  fi
  log "warning: TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH is not an executable file; looking elsewhere"
fi

if on_path="$(command -v temporal 2>/dev/null)" && is_executable_file "$on_path"; then
  absolute_path "$on_path"
  exit 0
fi

cache_dir="${GOALRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/goalrun}"
bin_dir="$cache_dir/bin"
target="$bin_dir/temporal"

if is_executable_file "$target"; then
  absolute_path "$target"
  exit 0
fi

command -v go >/dev/null 2>&1 ||
  die "no temporal binary found (TEMPORAL_CLI_PATH, PATH, $target) and 'go' is not installed.
  Install Go >= 1.$MIN_GO_MINOR (https://go.dev/dl/ or your package manager) and rerun this script,
  or install the Temporal CLI yourself and set TEMPORAL_CLI_PATH=/path/to/temporal."

mkdir -p "$bin_dir"
lock_file="$cache_dir/temporal-build.lock"

# flock is Linux-only; elsewhere fall back to an atomic mkdir lock.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$lock_file"
  if ! flock -n 9; then
    log "another process is building the temporal CLI; waiting for it (up to $((LOCK_WAIT_SECONDS / 60)) min)"
    flock -w "$LOCK_WAIT_SECONDS" 9 || die "timed out waiting for the build lock $lock_file"
  fi
else
  lock_dir="$lock_file.d"
  waited=0
  until mkdir "$lock_dir" 2>/dev/null; do
    ((waited == 0)) && log "another process is building the temporal CLI; waiting for it (lock $lock_dir)"
    ((waited >= LOCK_WAIT_SECONDS)) && die "timed out waiting for the build lock $lock_dir (remove it if stale)"
    sleep 2
    waited=$((waited + 2))
  done
  trap 'rmdir "$lock_dir" 2>/dev/null || true' EXIT
fi

# Whoever held the lock before us may have finished the build.
if is_executable_file "$target"; then
  absolute_path "$target"
  exit 0
fi

build_dir="$(mktemp -d "$cache_dir/build.XXXXXX")"
cleanup_build() { rm -rf "$build_dir"; }
trap 'cleanup_build; [[ -n "${lock_dir:-}" ]] && rmdir "$lock_dir" 2>/dev/null; true' EXIT

# A too-old local Go with GOTOOLCHAIN=local cannot build the CLI; `auto` fetches a newer toolchain
# through the same module proxy, and is a no-op when the local Go is new enough.
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
if [[ "$go_minor" =~ ^[0-9]+$ ]] && ((go_minor < MIN_GO_MINOR)); then
  log "local $(go env GOVERSION) is older than go1.$MIN_GO_MINOR; letting Go fetch a newer toolchain"
  export GOTOOLCHAIN=auto
fi

log "no temporal binary found; building the Temporal CLI from source into $bin_dir"
log "this is a one-time build and takes a few minutes (later runs reuse the cached binary)"

built=''
for version in "${CLI_VERSIONS[@]}"; do
  log "go install $CLI_MODULE@$version"
  # Run from the temp dir so no go.mod or go.work around the caller's cwd takes part in the build;
  # GOBIN points into the temp dir so the binary only reaches $bin_dir through an atomic rename.
  if (cd "$build_dir" &&
    GOBIN="$build_dir/bin" GOFLAGS=-mod=mod GOWORK=off GO111MODULE=on CGO_ENABLED=0 \
      go install "$CLI_MODULE@$version") >&2; then
    built="$version"
    break
  fi
  log "building $version failed; trying the next version"
done

[[ -n "$built" ]] || die "could not build the Temporal CLI (tried ${CLI_VERSIONS[*]}); see the go output above.
  Alternatively install the Temporal CLI yourself and set TEMPORAL_CLI_PATH=/path/to/temporal."

"$build_dir/bin/temporal" --version >&2 || die "the freshly built binary does not run: $build_dir/bin/temporal"
mv -f "$build_dir/bin/temporal" "$target"
log "installed Temporal CLI $built at $target"
absolute_path "$target"
