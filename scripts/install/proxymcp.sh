#!/usr/bin/env bash
# scripts/install/proxymcp.sh — install what proxymcp's tests need: Debian's
# haproxy package (the tests start their own `haproxy -f` as a child process).
# Idempotent: does nothing when haproxy is already on PATH. Never starts or
# enables the packaged system service.
set -euo pipefail

if command -v haproxy >/dev/null 2>&1; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "proxymcp: haproxy is missing and apt-get is not available; install HAProxy 2.6+ by hand" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
# Keep the package's maintainer scripts from starting the system service:
# policy-rc.d exit 101 forbids service starts during installation.
policy=/usr/sbin/policy-rc.d
created_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 0755 "$policy"
  created_policy=1
fi
cleanup() { if [ -n "$created_policy" ]; then $SUDO rm -f "$policy"; fi; }
trap cleanup EXIT

# Refresh the package lists only when haproxy is not installable as they are.
if ! apt-cache show haproxy >/dev/null 2>&1; then
  $SUDO apt-get update
fi
if ! $SUDO apt-get install -y --no-install-recommends haproxy; then
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends haproxy
fi

# If the service got started anyway (no policy-rc.d honoured), stop it: tests
# run their own haproxy on free ports.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet haproxy 2>/dev/null; then
  $SUDO systemctl stop haproxy || true
fi
command -v haproxy >/dev/null
haproxy -v | sed -n 1p
