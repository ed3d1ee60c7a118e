#!/usr/bin/env bash
# scripts/install/proxymcp.sh — install what proxymcp's tests need: Debian's
# openssl (test certificates) and haproxy packages (the tests start their own
# `haproxy -f` as a child process),
# and the newer LTS branches as cached chroots built with mmdebstrap:
#   3.0 from Debian trixie, 3.2 from Debian sid, each in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet/haproxy-<branch>
# (haproxytest runs them with `chroot DIR /usr/sbin/haproxy`).
# Idempotent: does nothing for what is already there. Never starts or
# enables the packaged system service.
#   PROXYMCP_CHROOTS=0 scripts/install/proxymcp.sh   only the system haproxy
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet"

# openssl makes the certificates the set_ssl_cert tests rotate
# (haproxytest.MakeCert: genpkey, req, ca -selfsign); with CI=true a missing
# openssl fails those tests.
if ! command -v openssl >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "proxymcp: openssl is missing and apt-get is not available; install openssl by hand" >&2
    exit 1
  fi
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssl; then
    $SUDO apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssl
  fi
  openssl version
fi

# chroot_ok DIR BRANCH: the chroot runs haproxy of that branch.
chroot_ok() {
  [ -x "$1/usr/sbin/haproxy" ] && $SUDO chroot "$1" /usr/sbin/haproxy -v 2>/dev/null | sed -n 1p | grep -q "^HAProxy version $2\."
}

# build_chroot BRANCH SUITE [mmdebstrap options...]: build once into a
# temporary directory, check the version, then move it into place.
build_chroot() {
  local branch=$1 suite=$2; shift 2
  local dir="$cache/haproxy-$branch"
  if chroot_ok "$dir" "$branch"; then
    return 0
  fi
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    $SUDO apt-get install -y --no-install-recommends mmdebstrap || {
      echo "proxymcp: mmdebstrap is missing and could not be installed; run: apt-get install mmdebstrap" >&2; return 1; }
  fi
  mkdir -p "$cache"
  local tmp="$dir.tmp.$$" log="$cache/haproxy-$branch.build.log"
  $SUDO rm -rf "$tmp"
  echo "proxymcp: building the HAProxy $branch chroot from Debian $suite in $dir (log: $log)" >&2
  if ! $SUDO mmdebstrap --variant=essential --include=haproxy "$@" "$suite" "$tmp" >"$log" 2>&1; then
    $SUDO rm -rf "$tmp"
    echo "proxymcp: building the HAProxy $branch chroot failed (mmdebstrap $suite, see $log);" \
      "check network access to deb.debian.org, then rerun scripts/install/proxymcp.sh" >&2
    tail -n 5 "$log" >&2 || true
    return 1
  fi
  if ! chroot_ok "$tmp" "$branch"; then
    local got
    got=$($SUDO chroot "$tmp" /usr/sbin/haproxy -v 2>&1 | sed -n 1p || true)
    $SUDO rm -rf "$tmp"
    echo "proxymcp: Debian $suite no longer ships HAProxy $branch (got: ${got:-nothing});" \
      "update the suite for $branch in scripts/install/proxymcp.sh" >&2
    return 1
  fi
  $SUDO rm -rf "$dir"
  $SUDO mv "$tmp" "$dir"
  $SUDO chroot "$dir" /usr/sbin/haproxy -v | sed -n 1p
}

chroots() {
  [ "${PROXYMCP_CHROOTS:-1}" = 0 ] && return 0
  local rc=0
  build_chroot 3.0 trixie || rc=1
  build_chroot 3.2 sid --aptopt='Acquire::Check-Valid-Until "false"' || rc=1
  return $rc
}

if command -v haproxy >/dev/null 2>&1; then
  chroots
  exit $?
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "proxymcp: haproxy is missing and apt-get is not available; install HAProxy 2.6+ by hand" >&2
  exit 1
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
chroots
