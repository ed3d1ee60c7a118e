#!/bin/sh
# pingcompare.sh ROUNDS label=binary[:NAME=value,...] ... — BenchmarkStdioPing
# run on each server in turn, ROUNDS times interleaved (load drifts; side by
# side is the only fair comparison on a shared machine), then the median of
# each server's per-run medians (µs), with tracing off and on (an OTLP
# receiver in the benchmark process, spans batched). Run from shared/serve:
#
#   go test -c -o /tmp/serve.test . && go build -o /tmp/bareping ./internal/bareping
#   go build -o /tmp/sdkping ./internal/sdkping && go build -o /tmp/pipefloor ./internal/pipefloor
#   (cd ../../streammcp && go build -o /tmp/streammcp .)
#   TEST=/tmp/serve.test testdata/pingcompare.sh 5 floor=/tmp/pipefloor bare=/tmp/bareping \
#       gosdk=/tmp/sdkping tssdk=$PWD/testdata/tsping.sh \
#       streammcp=/tmp/streammcp:STREAM_BROKERS=127.0.0.1:1
#
# pipefloor answers without decoding anything: the round trip of two
# processes and two pipes on this machine, under which no server goes.
# The peers: bareping (mcp-go alone, the library these servers build on),
# sdkping (the official Go SDK) and tsping.sh (the official TypeScript SDK),
# each a bare server with nothing registered. On a VM, which CPU each process
# lands on moves the figure by 2x; TEST=a script running
# `taskset -c 1 serve.test "$@"` pins both ends to one CPU for steadier runs.
set -eu
rounds=$1; shift
out=$(mktemp)
uptime
for r in $(seq "$rounds"); do
  for spec in "$@"; do
    label=${spec%%=*}; rest=${spec#*=}; bin=${rest%%:*}; env=""
    case $rest in *:*) env=$(echo "${rest#*:}" | tr , ' ');; esac
    PING_BIN=$bin PING_ENV=$env "${TEST:?TEST=path to the serve test binary}" -test.run '^$' \
      -test.bench 'StdioPing$' -test.benchtime 3000x 2>&1 |
      awk -v l="$label" '/µs-median/ { split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); print l, n[2], $(NF-1) }' >>"$out"
  done
done
uptime
for key in $(awk '{ print $1 "/" $2 }' "$out" | sort -u); do
  l=${key%/*}; t=${key#*/}
  awk -v l="$l" -v t="$t" '$1 == l && $2 == t { print $3 }' "$out" | sort -n |
    awk -v k="$key" '{ v[NR] = $1; all = all " " $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%-32s median %6.1f µs  runs:%s\n", k, m, all }'
done
rm -f "$out"
