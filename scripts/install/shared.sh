#!/usr/bin/env bash
# scripts/install/shared.sh — install what shared's tests need: Debian's
# prometheus (the metrics test scrapes a server with a real Prometheus and
# asks it PromQL). Idempotent. With CI=true the test fails, never skips,
# when prometheus is missing.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "shared.sh: install prometheus (Debian package prometheus)" >&2; exit 1; }
sudo=
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get install -y --no-install-recommends prometheus >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends prometheus >&2; }
