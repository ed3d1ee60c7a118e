package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
)

// Identity is the caller a query is attributed to. The MCP server builds it
// from the verified OAuth identity; the CLI leaves it empty.
type Identity struct {
	// RunAs, when set, is the principal the query runs as (X-Trino-User):
	// impersonation. It must be a clean name; one with control characters
	// is refused rather than altered into somebody else's.
	RunAs string
	// Principal names the caller for attribution (X-Trino-Client-Tags and
	// X-Trino-Client-Info). Empty means no attribution.
	Principal string
	// Subject and Email add detail to X-Trino-Client-Info.
	Subject string
	Email   string
}

type identityKey struct{}

// WithIdentity returns ctx carrying id; queries run with that ctx are
// attributed to (and, with RunAs, run as) the caller.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity carried by ctx, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Header names Trino reads; the engine sets them per request.
const (
	HeaderUser       = "X-Trino-User"
	HeaderCatalog    = "X-Trino-Catalog"
	HeaderSchema     = "X-Trino-Schema"
	HeaderClientTags = "X-Trino-Client-Tags"
	HeaderClientInfo = "X-Trino-Client-Info"
)

// requestOptions are the per-query headers, carried in the request context
// so that every request of one query (POST, page GETs and the cancelling
// DELETE) carries them.
type requestOptions struct {
	user, catalog, schema, tags, info string
	session                           []string // X-Trino-Session k=v values of the submit

	mu       sync.Mutex
	queryID  string
	onID     func(id string) // called once the coordinator names the query
	stats    engineStats     // the last stats the coordinator sent for queryID
	hasStats bool
	// cancel is the first DELETE of the query, sent or on its way.
	cancel *cancelSent
	// bound, while set, ends the requests of the query's read-only
	// transaction's START or ROLLBACK, whose own context (the driver's)
	// has no deadline.
	bound context.Context
}

// cancelSent is a query's first DELETE: done closes once answered, ok
// tells whether the engine accepted it.
type cancelSent struct {
	id   string
	done chan struct{}
	ok   bool // written before done closes
}

// cancelOnce sends the DELETE of query id unless the engine has accepted
// one already: sqlmcp cancels a query before closing its rows (so that the
// close does not wait for the page the driver is prefetching), and the
// driver's close, given that page, cancels again. The second DELETE waits
// for the first and is then answered here as the engine answers a DELETE,
// 204 No Content, with no request (it is sent when the first failed).
func (o *requestOptions) cancelOnce(id string, send func() (*http.Response, error), req *http.Request) (*http.Response, error) {
	o.mu.Lock()
	if first := o.cancel; first != nil && first.id == id {
		o.mu.Unlock()
		select {
		case <-first.done:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		if first.ok {
			return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		}
		return send()
	}
	first := &cancelSent{id: id, done: make(chan struct{})}
	o.cancel = first
	o.mu.Unlock()
	resp, err := send()
	first.ok = err == nil && resp.StatusCode/100 == 2
	close(first.done)
	return resp, err
}

func (o *requestOptions) setBound(ctx context.Context) {
	o.mu.Lock()
	o.bound = ctx
	o.mu.Unlock()
}

// bounded returns ctx ended also when the bound in effect ends.
func (o *requestOptions) bounded(ctx context.Context) context.Context {
	o.mu.Lock()
	b := o.bound
	o.mu.Unlock()
	if b == nil {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(b, cancel) // b always ends: its owner cancels it when done
	return ctx
}

func (o *requestOptions) setQueryID(id string) {
	o.mu.Lock()
	first := o.queryID == ""
	if first {
		o.queryID = id
	}
	o.mu.Unlock()
	if first && o.onID != nil {
		o.onID(id)
	}
}

// forgetQueryID clears the id learnt so far: the next submit names the
// query (a read-only transaction's START TRANSACTION is submitted first and
// is not the query to report, cancel or follow).
func (o *requestOptions) forgetQueryID() {
	o.mu.Lock()
	o.queryID = ""
	o.stats, o.hasStats = engineStats{}, false
	o.mu.Unlock()
}

// headersOnly is a fresh requestOptions sending o's headers: for a
// transaction begun ahead with the headers of the one before.
func (o *requestOptions) headersOnly() *requestOptions {
	return &requestOptions{user: o.user, catalog: o.catalog, schema: o.schema, tags: o.tags, info: o.info,
		session: slices.Clone(o.session)}
}

// callerKey names who a query's requests speak for: its user and
// attribution headers, and the caller's own token when one is exchanged
// for Trino's (hashed; never kept). A transaction begun ahead for one
// caller is only ever taken by a query of the same caller.
func callerKey(ctx context.Context, o *requestOptions) string {
	k := o.user + "\x00" + o.tags + "\x00" + o.info
	if t, ok := trinoauth.SubjectToken(ctx); ok {
		h := sha256.Sum256([]byte(t))
		k += "\x00" + string(h[:])
	}
	return k
}

// QueryID returns the coordinator's id of the query, once known.
func (o *requestOptions) QueryID() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.queryID
}

type optionsKey struct{}

// sessionNames are the default catalog and schema of a query: a per-query
// catalog replaces both defaults, a per-query schema alone replaces the
// schema.
func sessionNames(cfg Config, catalog, schema string) (string, string) {
	switch {
	case catalog != "":
		return catalog, schema
	case schema != "":
		return cfg.Catalog, schema
	}
	return cfg.Catalog, cfg.Schema
}

// withRequestOptions resolves the headers of one query from the defaults,
// the per-query catalog/schema and the caller in ctx.
func withRequestOptions(ctx context.Context, cfg Config, catalog, schema string) (context.Context, error) {
	o := &requestOptions{user: cfg.User}
	o.catalog, o.schema = sessionNames(cfg, catalog, schema)
	if err := checkNames("choose the default catalog and schema of the query", "catalog", o.catalog, "schema", o.schema); err != nil {
		return ctx, err
	}
	if o.schema != "" && o.catalog == "" {
		return ctx, newError(Invalid, "choose schema "+QuoteIdentifier(o.schema), errors.New("a schema needs a catalog"),
			"give a catalog as well, or configure SQLENGINE_CATALOG")
	}
	if id, ok := IdentityFrom(ctx); ok {
		if id.RunAs != "" {
			if strings.IndexFunc(id.RunAs, unicode.IsControl) >= 0 || strings.TrimSpace(id.RunAs) == "" {
				return ctx, newError(Permission, "run the query as the signed-in user", errors.New("the user name contains control characters"),
					"use another SQLENGINE_IMPERSONATION_FIELD or fix the identity provider's claim")
			}
			o.user = id.RunAs
		}
		if id.Principal != "" {
			o.tags = "sqlmcp," + clientTag("user:"+id.Principal)
			info := map[string]string{"client": "sqlmcp", "user": headerText(id.Principal)}
			if id.Subject != "" {
				info["subject"] = headerText(id.Subject)
			}
			if id.Email != "" {
				info["email"] = headerText(id.Email)
			}
			b, _ := json.Marshal(info) // escapes every control character
			o.info = string(b)
		}
	}
	return context.WithValue(ctx, optionsKey{}, o), nil
}

// clientTag makes s a single Trino client tag: no commas (the tag list
// separator), no control characters, no surrounding spaces.
func clientTag(s string) string {
	s = headerText(s)
	s = strings.ReplaceAll(s, ",", "_")
	return strings.TrimSpace(s)
}

// headerText replaces control characters (CR and LF among them) so a value
// can never split or end a header.
func headerText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// requestTransport puts the per-query headers on each request and learns the
// query id from the coordinator's first answer.
type requestTransport struct {
	base http.RoundTripper
}

func (t *requestTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	o, _ := req.Context().Value(optionsKey{}).(*requestOptions)
	if o == nil {
		return t.send(req)
	}
	req = req.Clone(o.bounded(req.Context()))
	set := func(name, v string) {
		if v == "" {
			req.Header.Del(name)
		} else {
			req.Header.Set(name, v)
		}
	}
	set(HeaderUser, o.user)
	set(HeaderTraceToken, backendcall.TraceID(req.Context()))
	set(HeaderCatalog, o.catalog)
	set(HeaderSchema, o.schema)
	if o.tags != "" {
		req.Header.Set(HeaderClientTags, o.tags)
	}
	if o.info != "" {
		req.Header.Set(HeaderClientInfo, o.info)
	}
	submit := req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/v1/statement")
	if _, id, ok := strings.Cut(req.URL.Path, "/v1/query/"); ok && req.Method == http.MethodDelete {
		return o.cancelOnce(id, func() (*http.Response, error) { return t.send(req) }, req)
	}
	if !submit {
		resp, err := t.send(req)
		if err == nil && resp.StatusCode == http.StatusOK && req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/v1/statement/") {
			// A nextUri page: its stats are the engine's latest account.
			resp.Body = &statsBody{ReadCloser: resp.Body, done: o.setStats}
		}
		return resp, err
	}
	for _, p := range o.session {
		key, _, _ := strings.Cut(p, "=")
		vals := req.Header.Values("X-Trino-Session")
		req.Header.Del("X-Trino-Session")
		for _, v := range vals {
			if k, _, _ := strings.Cut(v, "="); strings.TrimSpace(k) != key {
				req.Header.Add("X-Trino-Session", v)
			}
		}
		req.Header.Add("X-Trino-Session", p)
	}
	// The submit runs to its end even when the caller gives up meanwhile
	// (Ctrl-C, a cancelled MCP request): its answer carries the query id, and
	// without it the query could not be cancelled on the engine.
	caller := req.Context()
	sctx, stop := context.WithTimeout(o.bounded(context.WithoutCancel(caller)), submitTimeout)
	defer stop()
	resp, err := t.send(req.WithContext(sctx))
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	// The submit answer is small (QUEUED, no data); read it to learn the id.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	resp.Body.Close()
	if rerr != nil {
		return nil, rerr
	}
	var head struct {
		ID    string          `json:"id"`
		Stats json.RawMessage `json:"stats"`
	}
	if json.Unmarshal(body, &head) == nil && head.ID != "" {
		o.setQueryID(head.ID)
		o.setStats(head.ID, head.Stats)
	}
	if err := caller.Err(); err != nil {
		return nil, err // the id is known: the caller's cleanup cancels the query
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// send is one attempt of req. A failure waiting cannot heal is marked so
// that the driver does not retry it: only a refused connection, a reset
// and a 503 from a starting coordinator are worth the retry window.
func (t *requestTransport) send(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil && !healable(err) {
		return nil, &fatalTransportError{err: err}
	}
	return resp, err
}

// submitTimeout bounds a statement submit that outlives its caller.
const submitTimeout = 10 * time.Second
