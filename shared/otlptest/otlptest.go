// Package otlptest is the OTLP receiver the tracing tests export to: a
// small HTTP handler that decodes OTLP/HTTP requests (protobuf, or JSON)
// with the protocol's own generated types (go.opentelemetry.io/proto/otlp)
// and keeps the spans, so a test can assert the span tree a call produced.
// It is not the OpenTelemetry Collector: it stores what it is sent and
// answers success, which is all a test of the exporter's output needs.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened for assertions.
type Span struct {
	TraceID, SpanID, ParentSpanID string // hex; ParentSpanID "" for a root
	Name                          string
	Kind                          string // "server", "client", "internal"...
	Attrs                         map[string]string
	StatusCode                    string // "unset", "ok", "error"
	StatusMessage                 string
	Resource                      map[string]string // service.name, service.version...
	Scope                         string
	Start, End                    time.Time
}

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	// URL is the base URL to give OTEL_EXPORTER_OTLP_ENDPOINT (spans are
	// posted to URL + "/v1/traces").
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	spans    []Span
	requests int
	changed  chan struct{}
}

// Start runs a receiver until the test ends.
func Start(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "this receiver takes POST /v1/traces", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	json := strings.HasPrefix(req.Header.Get("Content-Type"), "application/json")
	if json {
		err = protojson.Unmarshal(b, &msg)
	} else {
		err = proto.Unmarshal(b, &msg)
	}
	if err != nil {
		http.Error(w, "not an OTLP ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, flatten(s, res, ss.GetScope().GetName()))
			}
		}
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	var out []byte
	if json {
		out, _ = protojson.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/json")
	} else {
		out, _ = proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	w.Write(out)
}

func flatten(s *tracepb.Span, res map[string]string, scope string) Span {
	kind := strings.ToLower(strings.TrimPrefix(s.GetKind().String(), "SPAN_KIND_"))
	code := strings.ToLower(strings.TrimPrefix(s.GetStatus().GetCode().String(), "STATUS_CODE_"))
	return Span{
		TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
		ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
		Name:         s.GetName(), Kind: kind, Attrs: attrs(s.GetAttributes()),
		StatusCode: code, StatusMessage: s.GetStatus().GetMessage(),
		Resource: res, Scope: scope,
		Start: time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano())),
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_BoolValue:
			out[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}

// Spans returns every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Requests is how many export requests arrived.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// WaitFor waits until done says the spans received are complete, and
// returns them; it fails the test after timeout, listing what arrived.
func (r *Receiver) WaitFor(t testing.TB, timeout time.Duration, done func([]Span) bool) []Span {
	t.Helper()
	deadline := time.After(timeout)
	for {
		spans := r.Spans()
		if done(spans) {
			return spans
		}
		select {
		case <-r.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the OTLP receiver did not get the expected spans within %s; got:\n%s", timeout, Tree(spans))
			return nil
		}
	}
}

// Named returns the spans called name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Has reports whether a span called name arrived.
func Has(spans []Span, name string) bool { return len(Named(spans, name)) > 0 }

// Tree renders spans as indented trees, one per trace (children in start
// order): "name [kind]" per line, for failure messages and comparisons.
func Tree(spans []Span) string {
	byParent := map[string][]Span{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	var roots []Span
	for _, s := range spans {
		if s.ParentSpanID == "" || !ids[s.ParentSpanID] {
			roots = append(roots, s)
			continue
		}
		byParent[s.ParentSpanID] = append(byParent[s.ParentSpanID], s)
	}
	order := func(s []Span) {
		slices.SortStableFunc(s, func(a, b Span) int { return a.Start.Compare(b.Start) })
	}
	order(roots)
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		fmt.Fprintf(&b, "%s%s [%s]", strings.Repeat("  ", depth), s.Name, s.Kind)
		if depth == 0 && s.ParentSpanID != "" {
			fmt.Fprintf(&b, " (parent %s, trace %s)", s.ParentSpanID, s.TraceID)
		}
		b.WriteByte('\n')
		kids := byParent[s.SpanID]
		order(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

// Path reports whether spans hold a chain of spans named names, each the
// parent of the next, all in one trace, and returns the chain.
func Path(spans []Span, names ...string) ([]Span, bool) {
	var try func(parent *Span, i int) []Span
	try = func(parent *Span, i int) []Span {
		if i == len(names) {
			return []Span{}
		}
		for _, s := range spans {
			if s.Name != names[i] || (parent != nil && (s.ParentSpanID != parent.SpanID || s.TraceID != parent.TraceID)) {
				continue
			}
			if rest := try(&s, i+1); rest != nil {
				return append([]Span{s}, rest...)
			}
		}
		return nil
	}
	chain := try(nil, 0)
	return chain, chain != nil
}
