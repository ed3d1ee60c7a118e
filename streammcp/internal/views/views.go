// Package views holds streammcp's MCP Apps views: single self-contained HTML
// files built by views/build.mjs from views/src (edit the sources there and
// rebuild; a test fails when a file here is stale). Registered through
// shared/apps as ui://streammcp/consumer-lag and ui://streammcp/cluster-health.
package views

import _ "embed"

// ConsumerLag shows a consumer-lag report (report.LagReport): groups by lag,
// per-partition lag bars, lag over successive reads.
//
//go:embed consumer-lag.html
var ConsumerLag string

// ClusterHealth shows each cluster's health check and under-replicated and
// offline partitions.
//
//go:embed cluster-health.html
var ClusterHealth string
