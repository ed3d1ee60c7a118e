#!/bin/sh
# PING_BIN for the TypeScript SDK peer (see tsping.cjs).
export NODE_PATH="${NODE_PATH:-$HOME/.cache/mcpfleet/ts-sdk/node_modules}"
exec node "$(dirname "$0")/tsping.cjs"
