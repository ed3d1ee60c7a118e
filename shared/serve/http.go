package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpbody"
	"github.com/mcpfleet/mcpfleet/shared/jsonscan"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
	"github.com/mcpfleet/mcpfleet/shared/state"
)

// HTTPHandler is the HTTP surface of a server: /mcp, /sse, /message,
// /healthz and, with OAuth, the metadata and flow endpoints.
type HTTPHandler struct {
	mux        *http.ServeMux
	streamable *server.StreamableHTTPServer
	sse        *server.SSEServer
	posts      *calls // requests being answered (not the long-lived GET streams)
	sessions   *sessions
	stopSweep  chan struct{}
	closeOnce  sync.Once
}

// NewHTTPHandler builds the handler. auth may be nil (OAuth disabled).
func NewHTTPHandler(p Program, s *Server, cfg Config, auth *httpauth.Layer, o Options) *HTTPHandler {
	var key []byte
	if auth != nil {
		key = auth.SessionKey()
	}
	sess := newSessions(key, orDefault(cfg.SessionIdleTimeout, DefaultSessionIdleTimeout), orDefault(cfg.MaxSessionsPerIdentity, DefaultMaxSessionsPerIdentity))
	if cfg.StateURL != "" {
		st, err := state.OpenRedis(cfg.StateURL)
		if err != nil {
			panic(err) // the tasks and approval configuration refuse such a URL first
		}
		sess.shared = st.Scoped(p.Name)
	}
	streamable := server.NewStreamableHTTPServer(s.MCPServer,
		server.WithSessionIdManagerResolver(sess),
		server.WithDisableLocalhostProtection(true), // hostGuard below does it, with MCP_ALLOWED_HOSTS
		server.WithStreamableHTTPLogger(o.Logger),
	)
	sse := server.NewSSEServer(s.MCPServer,
		server.WithSSEEndpoint("/sse"),
		server.WithMessageEndpoint("/message"),
		server.WithUseFullURLForMessageEndpoint(false),
		server.WithSSEDisableLocalhostProtection(true),
		server.WithSessionIDGenerator(sess.newSSESessionID),
		server.WithSSEContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			// SSE handlers run detached from the POST; carry the caller over.
			if id, ok := httpauth.IdentityFromContext(r.Context()); ok {
				ctx = httpauth.ContextWithIdentity(ctx, id)
			}
			return ctx
		}),
	)
	// An expired session is ended the way a client's DELETE ends it, so
	// that mcp-go frees everything it holds for it.
	sess.end = func(id string) {
		req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), systemKey{}, true), http.MethodDelete, "/mcp", nil)
		req.Header.Set(server.HeaderKeySessionID, id)
		streamable.ServeHTTP(discard{}, req)
	}
	posts := newCalls()
	busy := newInflight(orDefault(cfg.MaxInflightPerIdentity, DefaultMaxInflightPerIdentity))
	protect := func(h http.Handler) http.Handler {
		h = trackPosts(h, posts)
		if len(o.MethodAliases) > 0 {
			h = aliasMethods(h, o.MethodAliases)
		}
		h = limitBody(h, cfg.maxRequestBytes(), orDefault(cfg.RequestReadTimeout, DefaultRequestReadTimeout))
		h = busy.wrap(h)
		if auth != nil {
			h = auth.Protect(h)
		}
		return hostGuard(h, cfg)
	}
	mux := http.NewServeMux()
	var mcpHandler http.Handler = resourceURIs(streamable)
	if o.WrapMCP != nil {
		mcpHandler = o.WrapMCP(mcpHandler)
	}
	mux.Handle("/mcp", protect(countStreams(sess.guardStreamable(mcpHandler), s.Metrics, "streamable_http")))
	mux.Handle("/sse", protect(countStreams(sess.trackSSE(sse.SSEHandler()), s.Metrics, "sse")))
	mux.Handle("/message", protect(sess.guardSSEMessage(sse.MessageHandler())))
	// With OAuth, /readyz says only ready or not to a caller without a
	// valid token: what failed (back-end addresses, user names, paths) is
	// for a verified caller, the log and the MCP_METRICS_ADDR listener.
	// Without OAuth the listener is as open as /mcp, whose tools say more,
	// and binds loopback by default: it keeps the detail.
	verified := func(*http.Request) bool { return true }
	if auth != nil {
		verified = auth.Verified
	}
	mux.Handle("GET /readyz", newReadiness(o.Ready, o.Logger, verified))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"status": "ok", "name": p.Name, "version": p.Version})
	})
	// With OAuth, /metrics here needs the token like /mcp (tool names,
	// clients' activity); MCP_METRICS_ADDR serves it without one.
	var scrape http.Handler = s.Metrics.Handler()
	if auth != nil {
		auth.OnFailure(s.Metrics.AuthFailure)
		scrape = auth.Protect(scrape)
		auth.Register(mux)
	}
	mux.Handle("GET /metrics", scrape)
	h := &HTTPHandler{mux: mux, streamable: streamable, sse: sse, posts: posts, sessions: sess, stopSweep: make(chan struct{})}
	go sess.sweepEvery(min(max(sess.idle/10, time.Second), time.Minute), h.stopSweep)
	return h
}

// Close stops the idle-session sweeper.
func (h *HTTPHandler) Close() { h.closeOnce.Do(func() { close(h.stopSweep) }) }

// discard is the response writer of the server's own requests.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// countStreams counts open GET streams (SSE sessions, streamable HTTP
// listening streams) in mcpfleet_sessions.
func countStreams(next http.Handler, m *metrics.Metrics, transport string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		m.Sessions(transport, 1)
		defer m.Sessions(transport, -1)
		next.ServeHTTP(w, r)
	})
}

// trackPosts counts requests other than GET streams, so that a shutdown
// can wait for their answers and cancel them at its deadline.
func trackPosts(next http.Handler, posts *calls) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		ctx, done := posts.begin(r.Context())
		defer done()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// closeStreams ends long-lived SSE and streamable GET streams so that an
// HTTP shutdown is not held open by idle listeners.
func (h *HTTPHandler) closeStreams() {
	h.sse.CloseSessions()
	h.streamable.CloseSessions(context.Background())
}

// hostGuard rejects requests whose Host or Origin is not this server's, the
// DNS-rebinding protection the MCP specification requires. Loopback names
// are always accepted, as are MCP_HOST and MCP_ALLOWED_HOSTS.
func hostGuard(next http.Handler, cfg Config) http.Handler {
	allowed := []string{"localhost", "127.0.0.1", "::1"}
	if h := strings.Trim(cfg.Host, "[]"); h != "" && h != "0.0.0.0" && h != "::" {
		allowed = append(allowed, strings.ToLower(h))
	}
	for _, h := range cfg.AllowedHosts {
		allowed = append(allowed, strings.ToLower(strings.Trim(hostOnly(h), "[]")))
	}
	if u, err := url.Parse(cfg.Auth.BaseURL); err == nil && u.Hostname() != "" {
		allowed = append(allowed, strings.ToLower(u.Hostname()))
	}
	allowedHost := func(h string) bool {
		if slices.Contains(allowed, h) {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	strictHost := len(cfg.AllowedHosts) > 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins := r.Header.Values("Origin"); len(origins) > 0 {
			// An opaque origin ("null": sandboxed frames, file: pages,
			// redirects) cannot be told apart from an attacker's page.
			host, err := parseOrigin(origins[0])
			if len(origins) > 1 || err != nil || !allowedHost(host) {
				forbid(w, "Origin "+strconvQuote(strings.Join(origins, ", "))+" is not allowed; send an http(s)://host[:port] origin whose host is this server's, or add the host to MCP_ALLOWED_HOSTS")
				return
			}
		}
		host, err := parseHostPort(r.Host)
		if err != nil {
			forbid(w, "Host "+strconvQuote(r.Host)+" is malformed; send host[:port] with a port from 1 to 65535 (IPv6 in brackets)")
			return
		}
		if !allowedHost(host) && (strictHost || onLoopback(r)) {
			forbid(w, "Host "+strconvQuote(r.Host)+" is not allowed; add it to MCP_ALLOWED_HOSTS")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// forbid answers 403 with a reason the caller can act on.
func forbid(w http.ResponseWriter, reason string) {
	http.Error(w, "Forbidden: "+reason, http.StatusForbidden)
}

// strconvQuote quotes a header value for an error message, escaping
// control and non-ASCII characters so that the answer cannot be forged.
func strconvQuote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strconv.QuoteToASCII(s)
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func onLoopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	ip := net.ParseIP(hostOnly(a.String()))
	return ip != nil && ip.IsLoopback()
}

// aliasMethods rewrites aliased JSON-RPC method names in POST bodies.
func aliasMethods(next http.Handler, aliases map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := httpbody.Message(r); ok {
			if out, rewritten := rewriteMethod(body, aliases); rewritten {
				httpbody.Hold(r, out)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// rewriteMethod replaces an aliased "method" in one JSON-RPC message. It
// sees every request body over HTTP, so a message whose method the byte
// scanner reads as plainly no alias is passed over without decoding it
// (the common case); anything else is decoded as before. rewritten is
// false when msg is returned as it came.
func rewriteMethod(msg []byte, aliases map[string]string) (out []byte, rewritten bool) {
	if len(aliases) == 0 || !bytes.Contains(msg, []byte(`"method"`)) {
		return msg, false
	}
	var f [jsonscan.MaxFields]jsonscan.Field
	if n, ok := jsonscan.TopFields(msg, &f); ok {
		method := jsonscan.Member(f[:n], "method", false) // exactly: the rewrite decodes a map
		if method == nil {
			return msg, false // no "method" member: nothing to rewrite
		}
		if name, plain := jsonscan.PlainString(method); plain && utf8.Valid(name) {
			if _, aliased := aliases[string(name)]; !aliased {
				return msg, false
			}
		}
	}
	return rewriteMethodDecoded(msg, aliases)
}

// rewriteMethodDecoded is rewriteMethod by encoding/json.
func rewriteMethodDecoded(msg []byte, aliases map[string]string) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg, false
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil {
		return msg, false
	}
	to, ok := aliases[method]
	if !ok {
		return msg, false
	}
	m["method"], _ = json.Marshal(to)
	out, err := json.Marshal(m)
	if err != nil {
		return msg, false
	}
	return out, true
}
