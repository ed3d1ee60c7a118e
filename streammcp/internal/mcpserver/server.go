// Package mcpserver is streammcp's MCP surface: the four report resources
// (with the consumer-lag-report template), the Kafka tools, the prompts and
// resource subscriptions. It translates between MCP and the kafka and
// report packages and holds no Kafka knowledge of its own.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/apps"
	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/config"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/flight"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafkametrics"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// Resource URIs.
const (
	URIOverview    = "stream-mcp://overview"
	URIHealthCheck = "stream-mcp://health-check"
	URIURP         = "stream-mcp://under-replicated-partitions"
	URILagReport   = "stream-mcp://consumer-lag-report"
	// URILagTemplate lets a client pass its own threshold.
	URILagTemplate = "stream-mcp://consumer-lag-report{?threshold}"
	// URIClusters is the fleet document: every configured cluster at a glance.
	URIClusters = "stream-mcp://clusters"
)

// reports are the four per-cluster report names, in listing order.
var reports = []string{"overview", "health-check", "under-replicated-partitions", "consumer-lag-report"}

// ClusterURI returns the URI of one cluster's report, e.g.
// stream-mcp://clusters/prod/overview.
func ClusterURI(cluster, report string) string {
	return URIClusters + "/" + cluster + "/" + report
}

// Options configure the MCP surface.
type Options struct {
	// AllowWrites is the write switch of clusters given without Writes:
	// STREAM_ALLOW_WRITES.
	AllowWrites   bool
	WatchInterval time.Duration
	Logger        *slog.Logger
	// Gauges, when set, are refreshed by Watch every WatchInterval from
	// every cluster (metrics are never read from Kafka per scrape).
	Gauges *kafkametrics.Gauges
	// Views are the MCP Apps views (ui://streammcp/...); nil or off: none,
	// and the surface is exactly what it was without views. Register them
	// on the server (Views.Register) besides.
	Views *apps.Views
}

// Cluster is one Kafka cluster the surface serves.
type Cluster struct {
	Name         string
	Client       *kafka.Client
	LagThreshold int64
	// Writes is what write tools may do here; nil takes Options.AllowWrites
	// with no allowlists.
	Writes *config.Writes
}

// clusterState is a cluster with its own shared reads: concurrent reads of
// one cluster share a computation, different clusters never wait for each
// other.
type clusterState struct {
	Cluster
	clusterFlight flight.Group[*report.Cluster]
	groupsFlight  flight.Group[*report.Groups]
}

// Handler serves streammcp's resources, tools and prompts.
type Handler struct {
	clusters []*clusterState // the default cluster first
	byName   map[string]*clusterState
	members  *envconfig.Fleet // resolves a call's cluster argument
	opts     Options
	log      *slog.Logger

	subs  *subscriptions
	mcp   *server.MCPServer
	hooks *server.Hooks

	listenMu sync.Mutex
	listens  map[string]listener // subscriptions/listen streams (2026-07-28)
}

// New returns the Handler for the clusters (one or several); the first is
// the default one, which the seed URIs and tools without cluster read.
func New(clusters []Cluster, o Options) *Handler {
	if len(clusters) == 0 {
		panic("mcpserver.New: no cluster")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.WatchInterval <= 0 {
		o.WatchInterval = 30 * time.Second
	}
	h := &Handler{opts: o, log: o.Logger, byName: map[string]*clusterState{}, subs: newSubscriptions(), listens: map[string]listener{}}
	names := make([]string, len(clusters))
	for i, c := range clusters {
		names[i] = c.Name
	}
	h.members = config.Fleet(names)
	for _, c := range clusters {
		if c.Writes == nil {
			c.Writes = &config.Writes{Allowed: o.AllowWrites, AllowedVar: "STREAM_ALLOW_WRITES", TopicsVar: "STREAM_WRITE_TOPICS", GroupsVar: "STREAM_WRITE_GROUPS"}
		}
		cs := &clusterState{Cluster: c}
		h.clusters = append(h.clusters, cs)
		h.byName[c.Name] = cs
	}
	h.hooks = &server.Hooks{}
	h.hooks.AddBeforeReadResource(h.routeQuery)
	h.hooks.AddOnRequestInitialization(h.refuseUnknownSubscriptions)
	h.hooks.AddAfterSubscribe(h.onSubscribe)
	h.hooks.AddAfterUnsubscribe(h.onUnsubscribe)
	h.hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { h.subs.dropSession(s.SessionID()) })
	h.hooks.AddBeforeSubscriptionsListen(h.onListen)
	h.hooks.AddAfterSubscriptionsListen(func(ctx context.Context, id any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		h.endListen(ctx, id)
	})
	return h
}

// SetGauges makes Watch refresh g from every cluster each interval. Call it
// before Watch.
func (h *Handler) SetGauges(g *kafkametrics.Gauges) { h.opts.Gauges = g }

// defaultCluster is the cluster the seed URIs and tools without cluster read.
func (h *Handler) defaultCluster() *clusterState { return h.clusters[0] }

// names lists the configured cluster names, the default first.
func (h *Handler) names() []string {
	out := make([]string, len(h.clusters))
	for i, c := range h.clusters {
		out[i] = c.Name
	}
	return out
}

// ServerOptions are the mcp-go options the surface needs (capabilities,
// subscription hooks, instructions); pass them to serve.NewServer.
func (h *Handler) ServerOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithResourceCapabilities(true, false),
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithHooks(h.hooks),
		server.WithInstructions("streammcp reports on Kafka clusters. Read stream-mcp://health-check first; " +
			"stream-mcp://under-replicated-partitions and stream-mcp://consumer-lag-report{?threshold} give details; " +
			"these serve the default cluster. stream-mcp://clusters lists every configured cluster at a glance, and " +
			"stream-mcp://clusters/{cluster}/overview (also health-check, under-replicated-partitions, consumer-lag-report{?threshold}) " +
			"serve each one. The tools describe brokers, topics, groups and configs and peek at messages without committing; " +
			"they take an optional cluster."),
	}
}

// Register adds the resources, template, tools and prompts to the server
// calls serves; every tool goes through calls (validation; dry run,
// approval and audit for the write tools).
func (h *Handler) Register(calls *toolcall.Pipeline) {
	h.mcp = calls.Server()
	h.registerResources(h.mcp)
	h.registerTools(calls)
	h.registerPrompts(h.mcp)
}

func (h *Handler) registerResources(s *server.MCPServer) {
	desc := map[string]string{
		"overview":                    "Broker, controller, topic and partition counts, under-replicated and offline partitions, offline broker ids and a health label (healthy, warning, critical) from one metadata read.",
		"health-check":                "Broker, controller, partition and consumer statuses with an overall label (critical > warning > unknown > healthy); consumers use the cluster's lag threshold (STREAM_<NAME>_LAG_THRESHOLD or STREAM_LAG_THRESHOLD).",
		"under-replicated-partitions": "Every partition whose ISR is smaller than its replica set (offline partitions listed apart), with missing replicas and advice naming the brokers and topics involved.",
		"consumer-lag-report":         "Per-group lag against log-end offsets, high-lag partitions above the threshold (default STREAM_LAG_THRESHOLD) and advice. Add ?threshold=N for another threshold.",
	}
	title := map[string]string{
		"overview": "Cluster overview", "health-check": "Cluster health check",
		"under-replicated-partitions": "Under-replicated partitions", "consumer-lag-report": "Consumer lag report",
	}
	seeds := []struct{ uri, name, desc string }{
		{URIOverview, "Cluster overview", "Broker, controller, topic and partition counts, under-replicated and offline partitions, offline broker ids and a health label (healthy, warning, critical) from one metadata read."},
		{URIHealthCheck, "Cluster health check", "Broker, controller, partition and consumer statuses with an overall label (critical > warning > unknown > healthy); consumers use STREAM_LAG_THRESHOLD."},
		{URIURP, "Under-replicated partitions", "Every partition whose ISR is smaller than its replica set (offline partitions listed apart), with missing replicas and advice naming the brokers and topics involved."},
		{URILagReport, "Consumer lag report", "Per-group lag against log-end offsets, high-lag partitions above the threshold (default STREAM_LAG_THRESHOLD) and advice. Use stream-mcp://consumer-lag-report?threshold=N for another threshold."},
	}
	for _, r := range seeds {
		s.AddResource(mcp.NewResource(r.uri, r.name, mcp.WithResourceDescription(r.desc), mcp.WithMIMEType("application/json")), h.readResource)
	}
	s.AddResourceTemplate(mcp.NewResourceTemplate(URILagTemplate, "Consumer lag report with threshold",
		mcp.WithTemplateDescription("The consumer lag report with a lag threshold of your choice: threshold is a non-negative integer number of messages."),
		mcp.WithTemplateMIMEType("application/json")), h.readResource)
	s.AddResource(mcp.NewResource(URIClusters, "Kafka fleet",
		mcp.WithResourceDescription("Every configured cluster at a glance: health_status, broker_count, offline_broker_ids, under_replicated_partitions, offline_partitions, groups_with_high_lag, and error when the cluster could not be read. Clusters are read concurrently, each within its own timeout."),
		mcp.WithMIMEType("application/json")), h.readResource)
	for _, c := range h.clusters {
		for _, r := range reports {
			s.AddResource(mcp.NewResource(ClusterURI(c.Name, r), title[r]+" of "+c.Name,
				mcp.WithResourceDescription(desc[r]+" Cluster "+c.Name+"."), mcp.WithMIMEType("application/json")), h.readResource)
		}
	}
	for _, r := range reports {
		tmpl := ClusterURI("{cluster}", r)
		if r == "consumer-lag-report" {
			tmpl += "{?threshold}"
		}
		s.AddResourceTemplate(mcp.NewResourceTemplate(tmpl, title[r]+" of a cluster",
			mcp.WithTemplateDescription(desc[r]+" cluster is one of: "+strings.Join(h.names(), ", ")+"."),
			mcp.WithTemplateMIMEType("application/json")), h.readResource)
	}
}

// metaQueryURI is the _meta key that carries a report URI routeQuery
// redirected, so that readResource judges the URI the client sent.
const metaQueryURI = "streammcp/query-uri"

// routeQuery sends a report URI whose query mcp-go cannot route (static
// resources match exactly, and the {?threshold} templates match only that
// one parameter, so ?threshold=7&foo=1 or overview?x=1 would get a bare
// "resource not found") to the report's URI without the query, keeping the
// URI as sent in _meta: the answer then names the parameter that is wrong.
func (h *Handler) routeQuery(_ context.Context, _ any, req *mcp.ReadResourceRequest) {
	u, err := url.Parse(req.Params.URI)
	if err != nil || u.Scheme != "stream-mcp" || u.RawQuery == "" {
		return
	}
	base := "stream-mcp://" + u.Host + u.Path
	r, err := h.parseURI(base)
	if err != nil {
		return // not a report: the handler's "not found" is the right answer
	}
	if q, err := url.ParseQuery(u.RawQuery); err == nil && r.report == "consumer-lag-report" && len(q) == 1 && len(q["threshold"]) == 1 {
		return // a template serves it
	}
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	if req.Params.Meta.AdditionalFields == nil {
		req.Params.Meta.AdditionalFields = map[string]any{}
	}
	req.Params.Meta.AdditionalFields[metaQueryURI] = req.Params.URI
	req.Params.URI = base
}

// readResource serves every report URI; it parses the URI itself because
// mcp-go matches static resources exactly and template arguments are lost
// on partial matches.
func (h *Handler) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	if m := req.Params.Meta; m != nil {
		if sent, ok := m.AdditionalFields[metaQueryURI].(string); ok {
			uri = sent
		}
	}
	v, err := h.Report(ctx, uri)
	if err != nil {
		h.log.Warn("resource read failed", "uri", uri, "err", err)
		return nil, fmt.Errorf("%s", errorText(err))
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

// Report computes the document a URI names: a report of the default
// cluster (seed URIs), a report.Clustered (cluster URIs) or the
// report.Fleet (stream-mcp://clusters).
func (h *Handler) Report(ctx context.Context, uri string) (any, error) {
	return h.report(ctx, uri, liveReads{})
}

func (h *Handler) report(ctx context.Context, uri string, src snapshots) (any, error) {
	r, err := h.parseURI(uri)
	if err != nil {
		return nil, err
	}
	if r.fleet {
		return h.fleet(ctx, src), nil
	}
	v, err := h.clusterReport(ctx, r, src)
	if err != nil || !r.named {
		return v, err
	}
	return report.Clustered{Cluster: r.cl.Name, Report: v}, nil
}

func (h *Handler) clusterReport(ctx context.Context, r ref, src snapshots) (any, error) {
	switch r.report {
	case "overview":
		c, err := src.cluster(ctx, r.cl)
		if err != nil {
			return nil, err
		}
		return report.NewOverview(c), nil
	case "under-replicated-partitions":
		c, err := src.cluster(ctx, r.cl)
		if err != nil {
			return nil, err
		}
		return report.NewURPReport(c), nil
	case "consumer-lag-report":
		g, err := src.groups(ctx, r.cl)
		if err != nil {
			return nil, err
		}
		return report.NewLagReport(g, r.threshold), nil
	case "health-check":
		return h.health(ctx, r.cl, src)
	}
	return nil, mcperr.NotFoundf("unknown report %q", r.report)
}

// ref is what a report URI names.
type ref struct {
	fleet     bool          // stream-mcp://clusters
	cl        *clusterState // the cluster a report is about
	report    string        // overview, health-check, under-replicated-partitions, consumer-lag-report
	named     bool          // a stream-mcp://clusters/{cluster}/... URI: the document names its cluster
	threshold int64
}

// parseURI checks a report URI: the seed URIs (default cluster), the
// fleet document and stream-mcp://clusters/{cluster}/{report}.
func (h *Handler) parseURI(uri string) (ref, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "stream-mcp" {
		return ref{}, mcperr.Invalidf("resource URI %q is not a stream-mcp:// URI", uri)
	}
	var r ref
	path := strings.TrimSuffix(u.Path, "/")
	switch {
	case u.Host == "clusters" && path == "":
		r.fleet = true
	case u.Host == "clusters":
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		if len(parts) != 2 || !slices.Contains(reports, parts[1]) {
			return ref{}, mcperr.NotFoundf("unknown resource %q: cluster reports are stream-mcp://clusters/{cluster}/ followed by %s", uri, strings.Join(reports, ", "))
		}
		cl, ok := h.byName[parts[0]]
		if !ok {
			return ref{}, mcperr.NotFoundf("unknown cluster %s in %s: the configured clusters are %s (STREAM_CLUSTERS)", quoteShort(parts[0]), uri, strings.Join(h.names(), ", "))
		}
		r.cl, r.report, r.named = cl, parts[1], true
	case path == "" && slices.Contains(reports, u.Host):
		r.cl, r.report = h.defaultCluster(), u.Host
	default:
		return ref{}, mcperr.NotFoundf("unknown resource %q", uri)
	}
	if r.cl != nil {
		r.threshold = r.cl.LagThreshold
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return ref{}, mcperr.Invalidf("resource URI %q has a malformed query string: %v", uri, err)
	}
	example := URILagReport + "?threshold=5000"
	if r.named {
		example = ClusterURI(r.cl.Name, "consumer-lag-report") + "?threshold=5000"
	}
	for k, vs := range q {
		if r.report != "consumer-lag-report" || k != "threshold" {
			accepted := "this resource takes no query parameters"
			if r.report == "consumer-lag-report" {
				accepted = "the only accepted parameter is threshold (a non-negative integer), e.g. " + example
			}
			return ref{}, mcperr.Invalidf("unknown query parameter %q in %s: %s", k, uri, accepted)
		}
		if len(vs) != 1 {
			return ref{}, mcperr.Invalidf("query parameter threshold given %d times in %s: give it once, as a non-negative integer", len(vs), uri)
		}
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil || n < 0 {
			return ref{}, mcperr.Invalidf("invalid query parameter threshold=%q in %s: accepted is a non-negative integer number of messages, e.g. ?threshold=5000", vs[0], uri)
		}
		r.threshold = n
	}
	return r, nil
}

// snapshots reads a cluster's snapshots: live (shared among concurrent
// readers) or, for the watcher, at most once per tick.
type snapshots interface {
	cluster(ctx context.Context, c *clusterState) (*report.Cluster, error)
	groups(ctx context.Context, c *clusterState) (*report.Groups, error)
}

// liveReads reads Kafka now, sharing concurrent reads of one cluster.
type liveReads struct{}

func (liveReads) cluster(ctx context.Context, c *clusterState) (*report.Cluster, error) {
	v, _, err := c.clusterFlight.Do(ctx, "cluster", c.Client.Cluster)
	return v, err
}

func (liveReads) groups(ctx context.Context, c *clusterState) (*report.Groups, error) {
	v, _, err := c.groupsFlight.Do(ctx, "groups", c.Client.Groups)
	return v, err
}

// health reads both snapshots in parallel. Cluster metadata is required;
// a failed group read makes the consumer status unknown with its error.
func (h *Handler) health(ctx context.Context, cl *clusterState, src snapshots) (report.HealthCheck, error) {
	r := both(ctx, cl, src)
	if r.err != nil {
		return report.HealthCheck{}, r.err
	}
	return report.NewHealthCheck(r.c, r.g, r.gerr, cl.LagThreshold), nil
}

// pair is a cluster's metadata and groups snapshots; gerr is the groups
// error as a message.
type pair struct {
	c    *report.Cluster
	err  error
	g    *report.Groups
	gerr string
}

// both reads a cluster's metadata and groups snapshots in parallel.
func both(ctx context.Context, cl *clusterState, src snapshots) pair {
	type gres struct {
		g   *report.Groups
		err error
	}
	ch := make(chan gres, 1)
	go func() {
		g, err := src.groups(ctx, cl)
		ch <- gres{g, err}
	}()
	c, err := src.cluster(ctx, cl)
	gr := <-ch
	msg := ""
	if gr.err != nil {
		msg = errorText(gr.err)
	}
	return pair{c, err, gr.g, msg}
}

// fleetGrace is how long past a cluster's own timeout the fleet document
// waits for it; the client already bounds each read by its timeout, this
// only guards against a read that would not stop.
const fleetGrace = 500 * time.Millisecond

// fleet reads every cluster concurrently, each within its own timeout: an
// unreachable cluster is an entry with error, never a failed document, and
// never delays the others past its own timeout.
func (h *Handler) fleet(ctx context.Context, src snapshots) report.Fleet {
	entries := make([]report.FleetEntry, len(h.clusters))
	var wg sync.WaitGroup
	for i, cl := range h.clusters {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, cl.Client.Timeout()+fleetGrace)
			defer cancel()
			r := both(cctx, cl, src)
			cerr := ""
			if r.err != nil {
				r.c, cerr = nil, errorText(r.err)
			}
			entries[i] = report.NewFleetEntry(cl.Name, r.c, cerr, r.g, r.gerr, cl.LagThreshold)
		})
	}
	wg.Wait()
	return report.NewFleet(time.Now(), entries)
}

// Ready is the /readyz probe: one Metadata request per cluster, concurrently.
// The server is ready while at least one cluster answers — a fleet with one
// cluster down still serves the others, and the fleet document reports
// the failing one; the error names every cluster that failed.
func (h *Handler) Ready(ctx context.Context) error {
	type res struct {
		name string
		err  error
	}
	ch := make(chan res, len(h.clusters))
	for _, cl := range h.clusters {
		go func() { ch <- res{cl.Name, cl.Client.Ping(ctx)} }()
	}
	// The first cluster that answers makes the server ready: a hung
	// cluster does not hold the probe up.
	var failed []string
	for range h.clusters {
		r := <-ch
		if r.err == nil {
			return nil
		}
		failed = append(failed, fmt.Sprintf("cluster %s: %s", r.name, errorText(r.err)))
	}
	slices.Sort(failed)
	return fmt.Errorf("no Kafka cluster answers a metadata request (%s)", strings.Join(failed, "; "))
}
