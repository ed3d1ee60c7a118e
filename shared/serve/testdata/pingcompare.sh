#!/bin/sh
# pingcompare.sh ROUNDS label=binary[:NAME=value,...] ... — BenchmarkStdioPing
# run on each server in turn, ROUNDS times interleaved (load drifts; side by
# side is the only fair comparison on a shared machine), then the median of
# each server's per-run medians (µs), with tracing off and on (an OTLP
# receiver in the benchmark process, spans batched). Run from shared/serve:
#
#   go test -c -o /tmp/serve.test . && go build -o /tmp/bareping ./internal/bareping
#   (cd ../../streammcp && go build -o /tmp/streammcp .)
#   TEST=/tmp/serve.test testdata/pingcompare.sh 5 bare=/tmp/bareping \
#       streammcp=/tmp/streammcp:STREAM_BROKERS=127.0.0.1:1
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
