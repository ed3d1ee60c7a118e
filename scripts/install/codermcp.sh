#!/usr/bin/env bash
# scripts/install/codermcp.sh — install what codermcp's tests need: the Codex
# CLI at the pinned version, from npm into a cache directory (never globally).
# Idempotent: does nothing when the pinned CLI is already there. Prints the
# path of the CLI binary on stdout (the tests find it there or via
# CODER_TEST_CLI).
set -euo pipefail
version=0.169.0
cache=${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}
prefix=$cache/codex
bin=$prefix/node_modules/.bin/codex

have_pinned() {
  [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "codex-cli $version\$"
}

if ! have_pinned; then
  if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
      $SUDO apt-get install -y nodejs npm >&2 || { $SUDO apt-get update >&2 && $SUDO apt-get install -y nodejs npm >&2; }
    else
      echo "codermcp.sh: npm is required to install @openai/codex@$version" >&2
      exit 1
    fi
  fi
  mkdir -p "$prefix"
  echo "codermcp.sh: installing @openai/codex@$version into $prefix" >&2
  npm install --prefix "$prefix" --no-audit --no-fund "@openai/codex@$version" >&2
  if ! have_pinned; then
    echo "codermcp.sh: $bin is not codex-cli $version after install" >&2
    exit 1
  fi
fi
echo "$bin"
