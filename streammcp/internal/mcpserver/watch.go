package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// subscriptions tracks which sessions subscribed to which report URI, and
// the last signature seen per URI.
type subscriptions struct {
	mu   sync.Mutex
	subs map[string]map[string]bool // uri → session ids
	last map[string]string          // uri → signature
}

func newSubscriptions() *subscriptions {
	return &subscriptions{subs: map[string]map[string]bool{}, last: map[string]string{}}
}

func (s *subscriptions) add(uri, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs[uri] == nil {
		s.subs[uri] = map[string]bool{}
	}
	s.subs[uri][session] = true
}

func (s *subscriptions) remove(uri, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs[uri], session)
	if len(s.subs[uri]) == 0 {
		delete(s.subs, uri)
		delete(s.last, uri)
	}
}

func (s *subscriptions) dropSession(session string) {
	s.mu.Lock()
	uris := slices.Collect(maps.Keys(s.subs))
	s.mu.Unlock()
	for _, u := range uris {
		s.remove(u, session)
	}
}

// uris returns the subscribed URIs, sorted.
func (s *subscriptions) uris() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.subs))
}

func (s *subscriptions) sessions(uri string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.subs[uri]))
}

// changed records sig for uri and reports whether it differs from a
// previous signature (the first one is a baseline, not a change).
func (s *subscriptions) changed(uri, sig string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[uri]; !ok {
		return false
	}
	prev, had := s.last[uri]
	s.last[uri] = sig
	return had && prev != sig
}

func sessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// refuseUnknownSubscriptions answers resources/subscribe and
// subscriptions/listen with an error when a URI names no report (an
// unknown cluster, report or query parameter), before mcp-go acknowledges
// them: its subscribe hooks cannot refuse, and a silent acknowledgement
// would leave the client waiting for updates that never come. It sees
// every request, so it looks at the bytes first.
func (h *Handler) refuseUnknownSubscriptions(_ context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok || !bytes.Contains(raw, []byte("subscri")) {
		return nil
	}
	var m struct {
		Method mcp.MCPMethod `json:"method"`
		Params struct {
			Meta          *mcp.Meta `json:"_meta"`
			URI           *string   `json:"uri"`
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil // mcp-go answers a malformed request itself
	}
	var uris []string
	switch m.Method {
	case mcp.MethodResourcesSubscribe:
		if m.Params.URI == nil || *m.Params.URI == "" || mcp.IsModernProtocol(m.Params.Meta.ProtocolVersion()) {
			return nil // mcp-go's "uri is required", or the method is gone in that protocol
		}
		uris = []string{*m.Params.URI}
	case mcp.MethodSubscriptionsListen:
		uris = m.Params.Notifications.ResourceSubscriptions
	default:
		return nil
	}
	for _, uri := range uris {
		if _, err := h.parseURI(uri); err != nil {
			return fmt.Errorf("%s refused: %s; nothing was subscribed", m.Method, errorText(err))
		}
	}
	return nil
}

func (h *Handler) onSubscribe(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
	id := sessionID(ctx)
	if id == "" {
		return
	}
	uri := req.Params.URI
	if _, err := h.parseURI(uri); err != nil {
		h.log.Warn("subscription to an unknown resource ignored", "uri", uri, "err", err)
		return
	}
	h.subs.add(uri, id)
	h.log.Info("resource subscribed", "uri", uri, "session", id)
	// Take the baseline now, so the first tick can already notice a change.
	go h.check(context.WithoutCancel(ctx), uri)
}

func (h *Handler) onUnsubscribe(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
	if id := sessionID(ctx); id != "" {
		h.subs.remove(req.Params.URI, id)
	}
}

// Watch re-reads every subscribed report each interval until ctx ends and
// notifies subscribers when a status label or count changed. Within one
// tick each cluster is read at most once, however many of its reports (and
// the fleet document) are subscribed. With Options.Gauges it also reads
// every cluster each tick (and once at start) to refresh the gauges;
// otherwise it is idle when nobody is subscribed.
func (h *Handler) Watch(ctx context.Context) {
	t := time.NewTicker(h.opts.WatchInterval)
	defer t.Stop()
	if h.opts.Gauges != nil {
		h.tick(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.tick(ctx)
		}
	}
}

// tick re-reads what subscribers follow and the gauges need, sharing one
// read per cluster.
func (h *Handler) tick(ctx context.Context) {
	src := tickSource{newTickReads()}
	var wg sync.WaitGroup
	for _, uri := range h.subs.uris() {
		wg.Go(func() { h.checkWith(ctx, uri, src) })
	}
	if h.opts.Gauges != nil {
		for _, cl := range h.clusters {
			wg.Go(func() {
				r := both(ctx, cl, src)
				if r.err != nil {
					r.c = nil
				}
				h.opts.Gauges.Update(cl.Name, r.c, r.g, cl.LagThreshold)
			})
		}
	}
	wg.Wait()
}

// tickReads reads each cluster's snapshots at most once (per watcher tick).
type tickReads struct {
	mu      sync.Mutex
	cluster map[*clusterState]func() (*report.Cluster, error)
	group   map[*clusterState]func() (*report.Groups, error)
}

func newTickReads() *tickReads {
	return &tickReads{cluster: map[*clusterState]func() (*report.Cluster, error){}, group: map[*clusterState]func() (*report.Groups, error){}}
}

func (t *tickReads) clusterOf(ctx context.Context, c *clusterState) (*report.Cluster, error) {
	t.mu.Lock()
	f, ok := t.cluster[c]
	if !ok {
		f = sync.OnceValues(func() (*report.Cluster, error) { return liveReads{}.cluster(ctx, c) })
		t.cluster[c] = f
	}
	t.mu.Unlock()
	return f()
}

func (t *tickReads) groupsOf(ctx context.Context, c *clusterState) (*report.Groups, error) {
	t.mu.Lock()
	f, ok := t.group[c]
	if !ok {
		f = sync.OnceValues(func() (*report.Groups, error) { return liveReads{}.groups(ctx, c) })
		t.group[c] = f
	}
	t.mu.Unlock()
	return f()
}

// tickSource adapts tickReads to snapshots.
type tickSource struct{ *tickReads }

func (t tickSource) cluster(ctx context.Context, c *clusterState) (*report.Cluster, error) {
	return t.clusterOf(ctx, c)
}

func (t tickSource) groups(ctx context.Context, c *clusterState) (*report.Groups, error) {
	return t.groupsOf(ctx, c)
}

// check reads one report now and notifies its subscribers on a change.
func (h *Handler) check(ctx context.Context, uri string) {
	h.checkWith(ctx, uri, liveReads{})
}

func (h *Handler) checkWith(ctx context.Context, uri string, src snapshots) {
	v, err := h.report(ctx, uri, src)
	sig := ""
	if err != nil {
		sig = "error" // a report that starts or stops failing is a change
	} else {
		sig = signature(v)
	}
	if !h.subs.changed(uri, sig) || h.mcp == nil {
		return
	}
	for _, id := range h.subs.sessions(uri) {
		if strings.HasPrefix(id, listenPrefix) {
			h.notifyListener(id, uri)
			continue
		}
		if err := h.mcp.SendNotificationToSpecificClient(id, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri}); err != nil {
			h.log.Debug("resource update not delivered", "uri", uri, "session", id, "err", err)
		} else {
			h.log.Info("resource updated", "uri", uri, "session", id)
		}
	}
}

// signature is what must change for subscribers to hear about it: labels
// and counts, not timestamps or lag figures that move with every message.
func signature(v any) string {
	var s any
	switch r := v.(type) {
	case report.Clustered:
		return r.Cluster + " " + signature(r.Report)
	case report.Fleet:
		type entry struct {
			Cluster, Status                string
			Brokers, URP, Offline, HighLag *int
			OfflineIDs                     []int32
			Failed                         bool // the error text may vary; failing or not is the change
		}
		var es []entry
		for _, e := range r.Clusters {
			es = append(es, entry{e.Cluster, e.HealthStatus, e.BrokerCount, e.UnderReplicatedPartitions, e.OfflinePartitions, e.GroupsWithHighLag, e.OfflineBrokerIDs, e.Error != ""})
		}
		s = es
	case report.Overview:
		r.Timestamp = ""
		s = r
	case report.HealthCheck:
		r.Timestamp = ""
		s = r
	case report.URPReport:
		type part struct {
			T string
			P int32
			M []int32
		}
		var parts []part
		for _, d := range r.Details {
			parts = append(parts, part{d.Topic, d.Partition, d.MissingReplicas})
		}
		var off []part
		for _, o := range r.OfflinePartitions {
			off = append(off, part{T: o.Topic, P: o.Partition})
		}
		s = []any{r.UnderReplicatedPartitionCount, parts, off, r.OfflineBrokerIDs}
	case report.LagReport:
		type grp struct {
			ID, State string
			Members   *int
			High      bool
			Err       string
		}
		var gs []grp
		for _, g := range r.GroupSummary {
			gs = append(gs, grp{g.GroupID, g.State, g.MemberCount, g.HasHighLag, g.Error})
		}
		s = []any{r.LagThreshold, r.GroupCount, r.GroupsWithHighLag, gs, len(r.HighLagDetails), r.Errors}
	default:
		s = v
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// listener is one subscriptions/listen stream (protocol 2026-07-28). Its
// session is ephemeral and not registered with the server, so updates are
// written to its notification channel directly, tagged with the stream's
// subscription id as the protocol requires.
type listener struct {
	session server.ClientSession
	id      any
}

const listenPrefix = "listen:"

func listenKey(s server.ClientSession, id any) string {
	return fmt.Sprintf("%s%p:%v", listenPrefix, s, id)
}

func (h *Handler) onListen(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
	s := server.ClientSessionFromContext(ctx)
	if s == nil || id == nil {
		return
	}
	key := listenKey(s, id)
	var uris []string
	for _, uri := range req.Params.Notifications.ResourceSubscriptions {
		if _, err := h.parseURI(uri); err != nil {
			h.log.Warn("subscription to an unknown resource ignored", "uri", uri, "err", err)
			continue
		}
		uris = append(uris, uri)
	}
	if len(uris) == 0 {
		return
	}
	h.listenMu.Lock()
	h.listens[key] = listener{session: s, id: id}
	h.listenMu.Unlock()
	for _, uri := range uris {
		h.subs.add(uri, key)
		h.log.Info("resource subscribed", "uri", uri, "stream", fmt.Sprint(id))
		go h.check(context.WithoutCancel(ctx), uri)
	}
}

func (h *Handler) endListen(ctx context.Context, id any) {
	s := server.ClientSessionFromContext(ctx)
	if s == nil {
		return
	}
	key := listenKey(s, id)
	h.listenMu.Lock()
	delete(h.listens, key)
	h.listenMu.Unlock()
	h.subs.dropSession(key)
}

func (h *Handler) notifyListener(key, uri string) {
	h.listenMu.Lock()
	l, ok := h.listens[key]
	h.listenMu.Unlock()
	if !ok {
		h.subs.dropSession(key)
		return
	}
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: mcp.MethodNotificationResourceUpdated,
			Params: mcp.NotificationParams{
				Meta:             map[string]any{mcp.MetaKeySubscriptionID: l.id},
				AdditionalFields: map[string]any{"uri": uri},
			},
		},
	}
	select {
	case l.session.NotificationChannel() <- n:
		h.log.Info("resource updated", "uri", uri, "stream", fmt.Sprint(l.id))
	default:
		h.log.Debug("resource update not delivered: stream busy", "uri", uri)
	}
}
