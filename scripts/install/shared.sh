#!/usr/bin/env bash
# scripts/install/shared.sh — install what shared's tests need: Debian's
# prometheus (the metrics test scrapes a server with a real Prometheus and
# asks it PromQL) and redis-server (the state store tests run a real Redis,
# MCP_STATE_URL). Idempotent. With CI=true the tests fail, never skip, when
# either is missing.
set -euo pipefail
need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ ${#need[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "shared.sh: install ${need[*]} (Debian packages of those names)" >&2; exit 1; }
sudo=
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get install -y --no-install-recommends "${need[@]}" >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends "${need[@]}" >&2; }
