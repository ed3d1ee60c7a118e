package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// The views' names (ui://streammcp/<name>) and the tools that own them.
const (
	ViewConsumerLag   = "consumer-lag"
	ViewClusterHealth = "cluster-health"
	toolConsumerLag   = "get_consumer_lag"
	toolClusterHealth = "get_cluster_health"
	// toolReset is the tool the lag view offers a dry run of.
	toolReset = "reset_consumer_group_offsets"
)

// viewTools are the tools that exist for the views: the reports as tool
// results, which is what a view attaches to. Clients without the MCP Apps
// extension read the same reports as resources and see neither tool.
var viewTools = map[string]bool{toolConsumerLag: true, toolClusterHealth: true}

type lagIn struct {
	clusterArg
	Threshold *int64 `json:"threshold,omitempty" jsonschema:"lag threshold in messages; omit for the cluster's (STREAM_<NAME>_LAG_THRESHOLD or STREAM_LAG_THRESHOLD)" minimum:"0"`
}

// lagView is get_consumer_lag's result: the consumer-lag report of one
// cluster, with the cluster's name and, when writes are allowed there, the
// tool whose dry run the view offers per partition.
type lagView struct {
	Cluster string `json:"cluster"`
	report.LagReport
	ResetTool string `json:"reset_tool,omitempty"`
}

type healthIn struct {
	Cluster *string `json:"cluster,omitempty"`
}

// healthView is get_cluster_health's result: per cluster its health check
// and under-replicated partitions, or the error that kept it from being
// read; health_status is the worst of them.
type healthView struct {
	Timestamp    string          `json:"timestamp"`
	HealthStatus string          `json:"health_status"`
	Clusters     []clusterHealth `json:"clusters"`
}

type clusterHealth struct {
	Cluster                   string              `json:"cluster"`
	HealthCheck               *report.HealthCheck `json:"health_check"`
	UnderReplicatedPartitions *report.URPReport   `json:"under_replicated_partitions"`
	Error                     string              `json:"error,omitempty"`
}

// registerViews declares the two report tools the views attach to. Without
// views (MCP_APPS=off, or a Handler built without Options.Views) there are
// none, and the surface is exactly what it was before views existed.
func (h *Handler) registerViews(calls *toolcall.Pipeline) {
	v := h.opts.Views
	if v == nil || !v.On() {
		return
	}
	lag := h.tool(toolConsumerLag, "The consumer-lag report of one cluster (as stream-mcp://clusters/{cluster}/consumer-lag-report) as a tool result, shown by the consumer-lag view: groups by lag, per-partition lag bars, lag over successive reads, and a dry run of an offset reset when writes are allowed.",
		reads("Consumer lag"))
	lag.Options = v.Tool(ViewConsumerLag)
	toolcall.AddRead(calls, lag, h.consumerLag)
	health := toolcall.Tool{Name: toolClusterHealth,
		Description: "Every cluster's health check and under-replicated partitions (or one cluster's, with cluster) as a tool result, shown by the cluster-health view: brokers online and offline, the controller, under-replicated and offline partitions.",
		Effect:      reads("Cluster health"),
		Schema: func(s *jsonschema.Schema) {
			p := s.Properties["cluster"]
			p.Description = "Kafka cluster to report on, as named in STREAM_CLUSTERS; omit for every configured cluster"
			for _, n := range h.names() {
				p.Enum = append(p.Enum, n)
			}
		},
		Options: v.Tool(ViewClusterHealth),
	}
	toolcall.AddRead(calls, health, h.clusterHealth)
	// Clients without the extension get no view, so no tool that exists
	// for one (apps hides _meta.ui; these tools go as a whole). mcp-go
	// applies the filter to tools/call too: such a client calling one gets
	// the "tool not found" it got before views existed.
	server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		if apps.ClientSupports(ctx) {
			return tools
		}
		out := tools[:0:0]
		for _, t := range tools {
			if !viewTools[t.Name] {
				out = append(out, t)
			}
		}
		return out
	})(calls.Server())
}

func (h *Handler) consumerLag(ctx context.Context, in lagIn) (*mcp.CallToolResult, error) {
	cl, err := h.cluster(in.clusterArg)
	if err != nil {
		return mcperr.ToolResult(err), nil
	}
	threshold := cl.LagThreshold
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	g, err := liveReads{}.groups(ctx, cl)
	if err != nil {
		return toolError(err), nil
	}
	out := lagView{Cluster: cl.Name, LagReport: report.NewLagReport(g, threshold)}
	if cl.Writes.Allowed {
		out.ResetTool = toolReset
	}
	return result(out), nil
}

func (h *Handler) clusterHealth(ctx context.Context, in healthIn) (*mcp.CallToolResult, error) {
	targets := h.clusters
	if in.Cluster != nil {
		cl, err := h.cluster(clusterArg{Cluster: in.Cluster})
		if err != nil {
			return mcperr.ToolResult(err), nil
		}
		targets = []*clusterState{cl}
	}
	out := healthView{HealthStatus: report.Healthy, Clusters: make([]clusterHealth, len(targets))}
	var wg sync.WaitGroup
	for i, cl := range targets {
		wg.Go(func() {
			// Each cluster within its own timeout, as the fleet document:
			// an unreachable one is an entry with error.
			cctx, cancel := context.WithTimeout(ctx, cl.Client.Timeout()+fleetGrace)
			defer cancel()
			r := both(cctx, cl, liveReads{})
			e := clusterHealth{Cluster: cl.Name}
			if r.err != nil {
				e.Error = fmt.Sprintf("cluster %s: %s", cl.Name, errorText(r.err))
			} else {
				hc := report.NewHealthCheck(r.c, r.g, r.gerr, cl.LagThreshold)
				urp := report.NewURPReport(r.c)
				e.HealthCheck, e.UnderReplicatedPartitions = &hc, &urp
			}
			out.Clusters[i] = e
		})
	}
	wg.Wait()
	for _, e := range out.Clusters {
		s := report.Unknown
		if e.HealthCheck != nil {
			s = e.HealthCheck.OverallStatus
		}
		out.HealthStatus = report.Worst(out.HealthStatus, s)
	}
	out.Timestamp = report.Timestamp(time.Now())
	return result(out), nil
}
