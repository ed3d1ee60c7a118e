#!/usr/bin/env bash
# scripts/install/codermcp.sh — install what codermcp's tests need: the Codex
# CLI at the pinned version, plus the version matrix of issue 28, from npm into
# a cache directory (never globally).
# Idempotent: a version already there costs one `--version` run. Prints the
# path of the pinned CLI binary on stdout (the tests find it there or via
# CODER_TEST_CLI); the matrix versions live at
# $cache/codex-<version>/node_modules/.bin/codex (the pinned one is also
# reachable there, as a symlink to $cache/codex, so it is stored once).
# CODER_MATRIX=0 installs the pinned version only (a quick local set-up).
set -euo pipefail
version=0.171.0
# The versions people run (issue 28): the seed's minimum, the first native
# resume, the last with `codex mcp-server`, the pinned one and the newest.
matrix=(0.36.0 0.50.0 0.153.4 0.169.0 0.171.0)
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

# have BIN VERSION: BIN exists and reports exactly VERSION.
have() {
  [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "codex-cli $2\$"
}

need_npm() {
  command -v npm >/dev/null 2>&1 && return
  if command -v apt-get >/dev/null 2>&1; then
    apt_install nodejs npm
  else
    echo "codermcp.sh: npm is required to install @openai/codex" >&2
    exit 1
  fi
}

# install PREFIX VERSION: npm-install @openai/codex@VERSION into PREFIX unless present.
install() {
  local p=$1 v=$2 b=$1/node_modules/.bin/codex
  have "$b" "$v" && return
  need_npm
  mkdir -p "$p"
  echo "codermcp.sh: installing @openai/codex@$v into $p" >&2
  npm install --prefix "$p" --no-audit --no-fund --no-save "@openai/codex@$v" >&2
  if ! have "$b" "$v"; then
    echo "codermcp.sh: $b is not codex-cli $v after install" >&2
    exit 1
  fi
}

# A version pinned before is a link to $prefix: unlink it before $prefix
# holds another version, so that it gets its own directory.
for v in "${matrix[@]}"; do
  if [ "$v" != "$version" ] && [ -L "$cache/codex-$v" ]; then rm "$cache/codex-$v"; fi
done
install "$prefix" "$version"
if [ "${CODER_MATRIX:-1}" != 0 ]; then
  for v in "${matrix[@]}"; do
    if [ "$v" = "$version" ]; then
      # The pinned version is already in $prefix: link it rather than store 300 MB twice.
      [ -e "$cache/codex-$v" ] || ln -s "$prefix" "$cache/codex-$v"
      continue
    fi
    install "$cache/codex-$v" "$v"
  done
fi
echo "$bin"
