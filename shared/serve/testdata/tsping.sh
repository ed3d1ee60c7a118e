#!/bin/sh
# PING_BIN for the TypeScript SDK peer (see tsping.cjs). The benchmark starts
# servers with a bare environment: HOME and PATH are found here.
: "${PATH:=/usr/local/bin:/usr/bin:/bin}"
: "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
export PATH NODE_PATH="${NODE_PATH:-${MCPFLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet}/ts-sdk/node_modules}"
exec node "$(dirname "$0")/tsping.cjs"
