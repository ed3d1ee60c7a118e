#!/usr/bin/env bash
# scripts/install/views.sh — what the MCP Apps views need to build and to be
# tested in a real browser: Debian's chromium (never a browser download) and
# the npm packages pinned in views/package-lock.json (the ext-apps SDK,
# esbuild, playwright-core), installed with `npm ci` into a cache directory
# outside the repository. Idempotent: nothing is done when the cache already
# holds exactly the committed lock file. Prints the node_modules directory on
# stdout (views/build.mjs and views/test find it there, or via
# VIEWS_NODE_MODULES).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}
prefix=$cache/views

if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "views.sh: installing Debian's chromium" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2; }
  else
    echo "views.sh: chromium is missing; install Debian's package: sudo apt-get install -y chromium" >&2
    exit 1
  fi
fi

command -v npm >/dev/null || { echo "views.sh: npm is required (apt-get install npm)" >&2; exit 1; }
if ! cmp -s "$root/views/package-lock.json" "$prefix/package-lock.json" || [ ! -d "$prefix/node_modules/esbuild" ]; then
  mkdir -p "$prefix"
  cp "$root/views/package.json" "$root/views/package-lock.json" "$prefix/"
  # esbuild's own postinstall only checks its binary, which the optional
  # @esbuild/linux-x64 package already holds: no script needs to run.
  (cd "$prefix" && npm ci --ignore-scripts --no-audit --no-fund --silent) >&2
fi
echo "$prefix/node_modules"
