#!/usr/bin/env bash
# scripts/install/mcpb.sh — install the pinned MCP Bundle CLI (npm
# @anthropic-ai/mcpb) into a cache directory, never globally. Idempotent.
# Prints the path of the mcpb command on stdout (scripts/bundle and the
# tools/bundle tests find it there, or via MCPB_CLI).
set -euo pipefail
version=2.1.2
cache=${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}
prefix=$cache/mcpb
bin=$prefix/node_modules/.bin/mcpb
if ! { [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "$version" ]; }; then
  command -v npm >/dev/null || { echo "mcpb.sh: npm is required (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --silent "@anthropic-ai/mcpb@$version" >&2
fi
echo "$bin"
