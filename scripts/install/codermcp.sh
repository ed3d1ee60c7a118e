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

# apt_install PKG...: install Debian packages, refreshing the index only when needed.
apt_install() {
  local sudo=
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y "$@" >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y "$@" >&2; }
}

# The review tests need git; the CLI runs the model's commands with bash.
for tool in git bash; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || { echo "codermcp.sh: $tool is required" >&2; exit 1; }
    apt_install "$tool"
  fi
done

have_pinned() {
  [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "codex-cli $version\$"
}

if ! have_pinned; then
  if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      apt_install nodejs npm
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
