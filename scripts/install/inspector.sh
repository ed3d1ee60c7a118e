#!/usr/bin/env bash
# scripts/install/inspector.sh — the MCP Inspector (its CLI checks each
# server's MCP Apps views: --app-info --advertise-apps), pinned in
# views/inspector/package-lock.json and installed with `npm ci` into a cache
# directory outside the repository. Idempotent: nothing is done when the cache
# already holds exactly the committed lock file. Prints the CLI's path on
# stdout (the Go tests run it with node).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}
prefix=$cache/inspector
cli=$prefix/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js

command -v npm >/dev/null || { echo "inspector.sh: npm is required (apt-get install npm)" >&2; exit 1; }
if ! cmp -s "$root/views/inspector/package-lock.json" "$prefix/package-lock.json" || [ ! -f "$cli" ]; then
  mkdir -p "$prefix"
  cp "$root/views/inspector/package.json" "$root/views/inspector/package-lock.json" "$prefix/"
  (cd "$prefix" && npm ci --no-audit --no-fund --silent) >&2
fi
echo "$cli"
