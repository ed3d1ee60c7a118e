#!/usr/bin/env bash
# scripts/install/ts-sdk.sh — install the pinned official TypeScript MCP SDK
# (npm @modelcontextprotocol/sdk) into a cache directory, never globally and
# never into the repository. Idempotent. Prints the directory whose
# node_modules holds it on stdout (the task end-to-end test runs
# tools/tsclient/task.mjs with NODE_PATH there, or finds it via MCP_TS_SDK).
set -euo pipefail
version=1.32.2
cache=${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}
prefix=$cache/ts-sdk
pkg=$prefix/node_modules/@modelcontextprotocol/sdk/package.json
installed=$(node -p "require('$pkg').version" 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
  command -v npm >/dev/null || { echo "ts-sdk.sh: npm is required (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --silent "@modelcontextprotocol/sdk@$version" >&2
fi
echo "$prefix"
