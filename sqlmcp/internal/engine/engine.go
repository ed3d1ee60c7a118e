// Package engine is sqlmcp's access to a Trino coordinator through
// trino-go-client: streamed, capped query results with their types kept,
// catalog/schema per query, TLS and password settings that really take
// effect, and the caller's identity sent in Trino's own headers.
//
// It never imports an MCP SDK; the MCP server and the CLI both build on it.
//
// Basic use:
//
//	c, err := engine.New(engine.Config{Host: "localhost", Port: 8080, User: "me"})
//	res, err := c.Query(ctx, engine.Query{SQL: "SELECT 1", Limit: 10})
//
// Results are read row by row from the coordinator's pages; reading stops at
// the row limit or the byte cap, after which the query is cancelled on the
// coordinator (DELETE /v1/query/{id}), so memory never depends on the size of
// the full result.
package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultHost           = "localhost"
	DefaultPort           = 8080
	DefaultUser           = "sqlmcp"
	DefaultSource         = "sqlmcp"
	DefaultMaxRows        = 1000
	DefaultMaxResultBytes = 1 << 20
	DefaultQueryTimeout   = 300 * time.Second
	DefaultRetryTimeout   = 10 * time.Second
	// DefaultQueryMaxMemory is the distributed memory one query may use
	// (Trino's query_max_memory): enough for joins and aggregations an
	// assistant's exploratory query needs, a small share of a cluster whose
	// own query.max-memory defaults to 20GB, so one runaway query fails
	// early instead of starving others. Trino applies the lower of this and
	// its configured maximum.
	DefaultQueryMaxMemory = "1GB"
)

// Config is how to reach the coordinator and the default limits of a query.
type Config struct {
	Host     string
	Port     int
	User     string // the principal queries run as (X-Trino-User), unless impersonating
	Password string // HTTP basic authentication; needs TLS

	Catalog string // default catalog of every query ("" for none)
	Schema  string // default schema of every query ("" for none)

	// SSL enables TLS (scheme https). SSLInsecure skips verification of the
	// coordinator's certificate. Scheme, when set, overrides SSL ("http" or
	// "https").
	SSL         bool
	SSLInsecure bool
	Scheme      string
	// RootCAs, when set, are the certificate authorities trusted for TLS
	// instead of the system pool.
	RootCAs *x509.CertPool

	Source string // X-Trino-Source

	MaxRows        int           // rows of a Query when its Limit is 0
	MaxResultBytes int64         // JSON bytes of a Query's rows when its MaxBytes is 0
	QueryTimeout   time.Duration // deadline of every query, also sent as query_max_run_time
	// QueryMaxMemory is sent with every query as the session property
	// query_max_memory (a Trino data size such as "1GB").
	QueryMaxMemory string
	// RetryTimeout is how long one HTTP request is retried while the
	// coordinator is unreachable or busy (503), so that a call against an
	// engine that is down fails in seconds, not minutes.
	RetryTimeout time.Duration

	// ReadOnlyTransactions runs each query in a READ ONLY transaction (the
	// engine then refuses writes itself), as defence in depth for a
	// read-only server. An engine that refuses transactions is used without
	// them from then on.
	ReadOnlyTransactions bool
	// TxAhead, when positive, begins a caller's next read-only transaction
	// as soon as their last one ended, so that its START (a statement of
	// its own, queued like any) is off their next query's path; one that no
	// query took within TxAhead is rolled back. Keep it below Trino's
	// transaction.idle-timeout (default 5m).
	TxAhead time.Duration

	// Token, when set, is where the bearer token sent to Trino comes from
	// (SQLENGINE_AUTH jwt or token-exchange): every request of a query (the
	// submit, each page, the cancelling DELETE) carries it. TokenPerCaller
	// says it is the caller's own (token exchange): then no request goes
	// without a caller, and a 401 forgets the caller's cached token.
	Token          trinoauth.TokenSource
	TokenPerCaller bool
	// External, when set, turns on Trino's external (browser)
	// authentication (the SQL shell's auth: external).
	External *External

	// Transport, when set, is the HTTP round tripper under the engine's own
	// (tests use it to observe traffic). TLS settings above are ignored
	// then; configure them on the transport.
	Transport http.RoundTripper
}

// External is Trino's external authentication: the driver runs the
// x_redirect_server / x_token_server handshake, Redirect shows the sign-in
// URL, Cache keeps the token between runs.
type External struct {
	Redirect trino.RedirectHandler
	Cache    trino.TokenCache
}

// URL returns the coordinator's base URL (without credentials).
func (c Config) URL() string {
	return c.scheme() + "://" + net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

func (c Config) scheme() string {
	if c.Scheme != "" {
		return strings.ToLower(c.Scheme)
	}
	if c.SSL {
		return "https"
	}
	return "http"
}

func (c *Config) applyDefaults() {
	if c.Host == "" {
		c.Host = DefaultHost
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.User == "" {
		c.User = DefaultUser
	}
	if c.Source == "" {
		c.Source = DefaultSource
	}
	if c.MaxRows <= 0 {
		c.MaxRows = DefaultMaxRows
	}
	if c.MaxResultBytes == 0 {
		c.MaxResultBytes = DefaultMaxResultBytes
	}
	if c.QueryTimeout <= 0 {
		c.QueryTimeout = DefaultQueryTimeout
	}
	if c.RetryTimeout <= 0 {
		c.RetryTimeout = DefaultRetryTimeout
	}
	if c.QueryMaxMemory == "" {
		c.QueryMaxMemory = DefaultQueryMaxMemory
	}
}

// Client runs queries on one coordinator. It is safe for concurrent use.
type Client struct {
	cfg  Config
	db   *sql.DB
	http *http.Client // the driver's client, for cancelling a query early
	noTx atomic.Bool  // the engine refused START TRANSACTION READ ONLY

	progress progressHub // progress reports, to the queries that asked
	rec      *backendcall.Recorder
	times    *EngineTimes // the engine's own times per query; nil records none
	log      *slog.Logger

	ahead aheadTxs // read-only transactions begun ahead (Config.TxAhead)

	// Read-only transactions being ended in the background (endTx); Close
	// waits for them.
	endMu   sync.RWMutex
	closing bool
	ending  sync.WaitGroup
}

// New validates cfg and returns a client. It does not contact the
// coordinator: an engine that is down at start-up makes calls fail until it
// answers, it does not stop the caller.
func New(cfg Config) (*Client, error) {
	cfg.applyDefaults()
	scheme := cfg.scheme()
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("engine scheme %q is not http or https", cfg.Scheme)
	}
	if _, err := ParseDataSize(cfg.QueryMaxMemory); err != nil {
		return nil, fmt.Errorf("query memory limit %q: %w", cfg.QueryMaxMemory, err)
	}
	if cfg.Password != "" && scheme != "https" {
		return nil, errors.New("a password is only sent over TLS: enable SSL (https) or remove the password")
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	base := cfg.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if scheme == "https" {
			t.TLSClientConfig = &tls.Config{
				MinVersion:         tls.VersionTLS12,
				RootCAs:            cfg.RootCAs,
				InsecureSkipVerify: cfg.SSLInsecure, // SQLENGINE_SSL_INSECURE: the operator asked for it
			}
		}
		base = t
	}
	if cfg.Token != nil {
		if scheme != "https" {
			return nil, errors.New("a bearer token is only sent over TLS: enable SSL (https) or use SQLENGINE_AUTH=password")
		}
		if cfg.Password != "" {
			return nil, errors.New("a password and a bearer token cannot both be sent: remove the password")
		}
		base = &trinoauth.Transport{Base: base, Source: cfg.Token, ServiceUser: cfg.User}
		br := &bearerRefusal{base: base}
		if f, ok := cfg.Token.(interface{ Forget(string) }); ok && cfg.TokenPerCaller {
			br.forget = f.Forget
		}
		base = br
	}
	hc := &http.Client{Transport: &requestTransport{base: base}}
	tc := &trino.Config{
		ServerURI:  u.String(),
		Source:     cfg.Source,
		Catalog:    cfg.Catalog,
		Schema:     cfg.Schema,
		HTTPClient: hc,

		RequestRetryTimeout: &cfg.RetryTimeout,
	}
	if cfg.External != nil {
		if scheme != "https" {
			return nil, errors.New("external authentication needs TLS: enable SSL (https)")
		}
		tc.ExternalAuthentication = true
		tc.RedirectHandler = cfg.External.Redirect
		tc.TokenCache = cfg.External.Cache
	}
	conn, err := trino.NewConnector(tc)
	if err != nil {
		return nil, fmt.Errorf("configure the Trino client for %s: %w", cfg.URL(), err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &Client{cfg: cfg, db: db, http: hc}, nil
}

// Config returns the configuration in effect (defaults applied).
func (c *Client) Config() Config { return c.cfg }

// Close rolls back the read-only transactions begun ahead and waits for
// those still being ended (each bounded by endTimeout), so that the
// engine sees their ROLLBACK before the process exits, then releases the
// client's idle connections.
func (c *Client) Close() error {
	c.endMu.Lock()
	c.closing = true
	c.endMu.Unlock()
	for _, t := range c.ahead.close() {
		c.endTx(t, false) // closing: ended here, before Close returns
	}
	c.ahead.expiring.Wait()
	c.ending.Wait()
	return c.db.Close()
}

// cancel asks the coordinator to end query id (DELETE /v1/query/{id}) right
// away. The driver would cancel too when the rows are closed, but only after
// waiting for the page it is prefetching; this ends the query first, and
// the driver's DELETE is then not sent again (requestOptions.cancelOnce).
func (c *Client) cancel(ctx context.Context, id string) {
	if id == "" {
		return
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.cfg.URL()+"/v1/query/"+url.PathEscape(id), nil)
	if err != nil {
		return
	}
	req.Header.Set("X-Trino-Source", c.cfg.Source)
	if c.cfg.Password != "" {
		req.SetBasicAuth(c.cfg.User, c.cfg.Password)
	}
	if resp, err := c.http.Do(req); err == nil {
		resp.Body.Close()
	}
}

// Ping checks that the coordinator answers (GET /v1/info) and accepts the
// credentials.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, min(c.cfg.QueryTimeout, 30*time.Second))
	defer cancel()
	ctx, err := withRequestOptions(ctx, c.cfg, "", "")
	if err != nil {
		return err
	}
	if c.cfg.TokenPerCaller {
		// No caller at start-up or on /readyz: only check that the
		// coordinator answers (GET /v1/info is not authenticated in Trino).
		return c.info(ctx)
	}
	if err := c.db.PingContext(ctx); err != nil {
		return classify(err, "reach the Trino coordinator at "+c.cfg.URL())
	}
	return nil
}

// info checks that the coordinator answers GET /v1/info, without
// credentials.
func (c *Client) info(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.URL()+"/v1/info", nil)
	if err != nil {
		return err
	}
	base := c.cfg.Transport
	if t, ok := c.http.Transport.(*requestTransport); ok {
		base = t.base
	}
	if at, ok := base.(*bearerRefusal); ok {
		base = at.base
	}
	if at, ok := base.(*trinoauth.Transport); ok {
		base = at.Base // unauthenticated: there is no caller to speak for
	}
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return classify(&fatalTransportError{err: err}, "reach the Trino coordinator at "+c.cfg.URL())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return classify(&trino.ErrQueryFailed{StatusCode: resp.StatusCode, Reason: errors.New(resp.Status)}, "reach the Trino coordinator at "+c.cfg.URL())
	}
	return nil
}

// bearerRefusal turns Trino refusing the bearer token (401) into a
// tokenRefused error and, with token exchange, drops the caller's exchanged
// token, so that the next call exchanges again instead of reusing it. The
// request is never retried as anyone else.
type bearerRefusal struct {
	base   http.RoundTripper
	forget func(subject string) // nil: a static token
}

func (f *bearerRefusal) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	if sub, ok := trinoauth.SubjectToken(req.Context()); ok && f.forget != nil {
		f.forget(sub)
	}
	return nil, &tokenRefused{reason: printable(string(body))}
}

// tokenRefused is Trino answering 401 to a bearer token.
type tokenRefused struct{ reason string }

func (e *tokenRefused) Error() string {
	if e.reason == "" {
		return "Trino refused the bearer token (401)"
	}
	return "Trino refused the bearer token (401): " + e.reason
}

// printable is Trino's reason for a 401 (its answer's text, which never
// holds the token) on one line, cut to 200 bytes.
func printable(v string) string {
	v = strings.Join(strings.Fields(v), " ")
	v = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, v)
	if len(v) > 200 {
		v = v[:200]
	}
	return v
}

var dataSizeRE = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*(B|kB|KB|MB|GB|TB|PB)$`)

// ParseDataSize reads a Trino data size ("512MB", "1GB", "1.5TB"; units B,
// kB, MB, GB, TB, PB, powers of 1024) and returns its bytes.
func ParseDataSize(s string) (int64, error) {
	m := dataSizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, errors.New("not a data size: give a number and a unit B, kB, MB, GB, TB or PB, e.g. 1GB")
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	mult := map[string]float64{"B": 1, "kB": 1 << 10, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}[m[2]]
	b := v * mult
	if b < 1<<20 || b > 1<<62 {
		return 0, errors.New("out of range: give at least 1MB")
	}
	return int64(b), nil
}

// sessionProperties are the engine-side limits sent with a query: Trino
// fails it with EXCEEDED_TIME_LIMIT or EXCEEDED_*_MEMORY_LIMIT itself, so
// the work it does is bounded, not only the rows read back.
func sessionProperties(timeout time.Duration, maxMemory string) []string {
	run := strconv.FormatInt(timeout.Milliseconds(), 10) + "ms"
	if timeout%time.Second == 0 {
		run = strconv.FormatInt(int64(timeout/time.Second), 10) + "s"
	}
	return []string{"query_max_run_time=" + run, "query_max_memory=" + strings.ReplaceAll(maxMemory, " ", "")}
}
