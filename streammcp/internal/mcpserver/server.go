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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/flight"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
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
)

// Options configure the MCP surface.
type Options struct {
	LagThreshold  int64
	AllowWrites   bool
	WatchInterval time.Duration
	Logger        *slog.Logger
}

// Handler serves streammcp's resources, tools and prompts.
type Handler struct {
	kc   *kafka.Client
	opts Options
	log  *slog.Logger

	clusterFlight flight.Group[*report.Cluster]
	groupsFlight  flight.Group[*report.Groups]

	subs  *subscriptions
	mcp   *server.MCPServer
	hooks *server.Hooks

	listenMu sync.Mutex
	listens  map[string]listener // subscriptions/listen streams (2026-07-28)
}

// New returns a Handler reading through kc.
func New(kc *kafka.Client, o Options) *Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.WatchInterval <= 0 {
		o.WatchInterval = 30 * time.Second
	}
	h := &Handler{kc: kc, opts: o, log: o.Logger, subs: newSubscriptions(), listens: map[string]listener{}}
	h.hooks = &server.Hooks{}
	h.hooks.AddBeforeReadResource(routeQuery)
	h.hooks.AddAfterSubscribe(h.onSubscribe)
	h.hooks.AddAfterUnsubscribe(h.onUnsubscribe)
	h.hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { h.subs.dropSession(s.SessionID()) })
	h.hooks.AddBeforeSubscriptionsListen(h.onListen)
	h.hooks.AddAfterSubscriptionsListen(func(ctx context.Context, id any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		h.endListen(ctx, id)
	})
	return h
}

// ServerOptions are the mcp-go options the surface needs (capabilities,
// subscription hooks, instructions); pass them to serve.NewServer.
func (h *Handler) ServerOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithResourceCapabilities(true, false),
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithHooks(h.hooks),
		server.WithInstructions("streammcp reports on a Kafka cluster. Read stream-mcp://health-check first; " +
			"stream-mcp://under-replicated-partitions and stream-mcp://consumer-lag-report{?threshold} give details; " +
			"the tools describe brokers, topics, groups and configs and peek at messages without committing."),
	}
}

// Register adds the resources, template, tools and prompts to s, with the
// tools behind a pipeline with default policy and no audit log (tests).
// Servers use RegisterWith and the pipeline serve configured.
func (h *Handler) Register(s *server.MCPServer) {
	calls, err := toolcall.New(s, toolcall.Config{Audit: audit.Config{Dest: "off"}}, toolcall.Options{Server: "streammcp"})
	if err != nil {
		panic(err) // an audit log that is off cannot fail to open
	}
	h.RegisterWith(s, calls)
}

// RegisterWith adds the resources, template, tools and prompts to s; every
// tool goes through calls (validation; dry run, approval and audit for
// produce_message and create_topic).
func (h *Handler) RegisterWith(s *server.MCPServer, calls *toolcall.Pipeline) {
	h.mcp = s
	h.registerResources(s)
	h.registerTools(calls)
	h.registerPrompts(s)
}

func (h *Handler) registerResources(s *server.MCPServer) {
	res := []struct{ uri, name, desc string }{
		{URIOverview, "Cluster overview", "Broker, controller, topic and partition counts, under-replicated and offline partitions, offline broker ids and a health label (healthy, warning, critical) from one metadata read."},
		{URIHealthCheck, "Cluster health check", "Broker, controller, partition and consumer statuses with an overall label (critical > warning > unknown > healthy); consumers use STREAM_LAG_THRESHOLD."},
		{URIURP, "Under-replicated partitions", "Every partition whose ISR is smaller than its replica set (offline partitions listed apart), with missing replicas and advice naming the brokers and topics involved."},
		{URILagReport, "Consumer lag report", "Per-group lag against log-end offsets, high-lag partitions above the threshold (default STREAM_LAG_THRESHOLD) and advice. Use stream-mcp://consumer-lag-report?threshold=N for another threshold."},
	}
	for _, r := range res {
		s.AddResource(mcp.NewResource(r.uri, r.name, mcp.WithResourceDescription(r.desc), mcp.WithMIMEType("application/json")), h.readResource)
	}
	s.AddResourceTemplate(mcp.NewResourceTemplate(URILagTemplate, "Consumer lag report with threshold",
		mcp.WithTemplateDescription("The consumer lag report with a lag threshold of your choice: threshold is a non-negative integer number of messages."),
		mcp.WithTemplateMIMEType("application/json")), h.readResource)
}

// metaQueryURI is the _meta key that carries a report URI routeQuery
// redirected, so that readResource judges the URI the client sent.
const metaQueryURI = "streammcp/query-uri"

// routeQuery sends a report URI whose query mcp-go cannot route (static
// resources match exactly, and the {?threshold} template matches only that
// one parameter, so ?threshold=7&foo=1 or overview?x=1 would get a bare
// "resource not found") to the report's static entry, keeping the URI as
// sent in _meta: the answer then names the parameter that is wrong.
func routeQuery(_ context.Context, _ any, req *mcp.ReadResourceRequest) {
	u, err := url.Parse(req.Params.URI)
	if err != nil || u.Scheme != "stream-mcp" || u.RawQuery == "" {
		return
	}
	base := "stream-mcp://" + u.Host + u.Path
	switch base {
	case URIOverview, URIHealthCheck, URIURP, URILagReport:
	default:
		return // not a report: mcp-go's "not found" is the right answer
	}
	if q, err := url.ParseQuery(u.RawQuery); err == nil && base == URILagReport && len(q) == 1 && len(q["threshold"]) == 1 {
		return // the template serves it
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
		return nil, fmt.Errorf("%s", mcperr.Message(err))
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

// Report computes the report a URI names.
func (h *Handler) Report(ctx context.Context, uri string) (any, error) {
	name, threshold, err := h.parseURI(uri)
	if err != nil {
		return nil, err
	}
	switch name {
	case "overview":
		c, err := h.cluster(ctx)
		if err != nil {
			return nil, err
		}
		return report.NewOverview(c), nil
	case "under-replicated-partitions":
		c, err := h.cluster(ctx)
		if err != nil {
			return nil, err
		}
		return report.NewURPReport(c), nil
	case "consumer-lag-report":
		g, err := h.groups(ctx)
		if err != nil {
			return nil, err
		}
		return report.NewLagReport(g, threshold), nil
	case "health-check":
		return h.health(ctx)
	}
	return nil, mcperr.NotFoundf("unknown resource %q", uri)
}

// parseURI checks a report URI and returns the report name and threshold.
func (h *Handler) parseURI(uri string) (string, int64, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "stream-mcp" {
		return "", 0, mcperr.Invalidf("resource URI %q is not a stream-mcp:// URI", uri)
	}
	name := u.Host + strings.TrimSuffix(u.Path, "/")
	threshold := h.opts.LagThreshold
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", 0, mcperr.Invalidf("resource URI %q has a malformed query string: %v", uri, err)
	}
	for k, vs := range q {
		if name != "consumer-lag-report" || k != "threshold" {
			accepted := "this resource takes no query parameters"
			if name == "consumer-lag-report" {
				accepted = "the only accepted parameter is threshold (a non-negative integer), e.g. stream-mcp://consumer-lag-report?threshold=5000"
			}
			return "", 0, mcperr.Invalidf("unknown query parameter %q in %s: %s", k, uri, accepted)
		}
		if len(vs) != 1 {
			return "", 0, mcperr.Invalidf("query parameter threshold given %d times in %s: give it once, as a non-negative integer", len(vs), uri)
		}
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil || n < 0 {
			return "", 0, mcperr.Invalidf("invalid query parameter threshold=%q in %s: accepted is a non-negative integer number of messages, e.g. ?threshold=5000", vs[0], uri)
		}
		threshold = n
	}
	return name, threshold, nil
}

// cluster reads the cluster snapshot, sharing concurrent reads.
func (h *Handler) cluster(ctx context.Context) (*report.Cluster, error) {
	v, _, err := h.clusterFlight.Do(ctx, "cluster", h.kc.Cluster)
	return v, err
}

// groups reads the consumer-group snapshot, sharing concurrent reads.
func (h *Handler) groups(ctx context.Context) (*report.Groups, error) {
	v, _, err := h.groupsFlight.Do(ctx, "groups", h.kc.Groups)
	return v, err
}

// health reads both snapshots in parallel. Cluster metadata is required;
// a failed group read makes the consumer status unknown with its error.
func (h *Handler) health(ctx context.Context) (report.HealthCheck, error) {
	type gres struct {
		g   *report.Groups
		err error
	}
	ch := make(chan gres, 1)
	go func() {
		g, err := h.groups(ctx)
		ch <- gres{g, err}
	}()
	c, err := h.cluster(ctx)
	gr := <-ch
	if err != nil {
		return report.HealthCheck{}, err
	}
	msg := ""
	if gr.err != nil {
		msg = mcperr.Message(gr.err)
	}
	return report.NewHealthCheck(c, gr.g, msg, h.opts.LagThreshold), nil
}
