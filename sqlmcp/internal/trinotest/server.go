package trinotest

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Names of the sample data set. Tests should use these rather than literals
// so a change of the data set shows up at compile time.
const (
	// DefaultCatalog and DefaultSchema are the catalog and schema DSN puts
	// into the connection string.
	DefaultCatalog = "sales"
	DefaultSchema  = "public"
	// LargeTable is the fully qualified name of the generated table of
	// LargeTableRows rows (Options.LargeTableRows), ordered by its id column
	// 1..N.
	LargeTable = "warehouse.logs.events"
	// LargeTableRows is the default row count of LargeTable.
	LargeTableRows = 1_000_000
	// DefaultPageSize is the default number of rows per result page.
	DefaultPageSize = 1000
	// Version is the nodeVersion that GET /v1/info reports.
	Version = "476-trinotest"
)

// Options configure a Server. The zero value is a plain-HTTP server with the
// sample data set, DefaultPageSize rows per page and no authentication.
type Options struct {
	// PageSize is the number of rows per nextUri page (default
	// DefaultPageSize). Small values make paging observable.
	PageSize int
	// TLS serves HTTPS with a self-signed certificate for 127.0.0.1 and
	// localhost; CACertPEM returns it.
	TLS bool
	// Users maps user names to passwords. When set, every request needs
	// HTTP basic authentication with one of them (401 otherwise) and TLS is
	// required, as in Trino. Any X-Trino-User is then accepted, as by a
	// Trino whose impersonation rules allow it.
	Users map[string]string
	// LargeTableRows is the number of rows generated into LargeTable at
	// start (default LargeTableRows; negative for none).
	LargeTableRows int
	// NoSampleData starts with empty catalogs sales and warehouse and the
	// empty schema sales.public only.
	NoSampleData bool
	// MaxWait is how long a nextUri GET waits for the next page before it
	// answers an empty RUNNING page (default 1s), like Trino's maxWait.
	MaxWait time.Duration
	// Addr is the listen address (default 127.0.0.1:0, a free port).
	Addr string
	// AbandonAfter cancels a query whose client has not asked for a page
	// for this long (default 2m), as Trino abandons queries; the query fails
	// with ABANDONED_QUERY.
	AbandonAfter time.Duration
	// QueueTime keeps every query QUEUED this long before it runs, as
	// behind a resource group's concurrency limit; the stats then report
	// it as queuedTimeMillis.
	QueueTime time.Duration
	// NoTransactions refuses START TRANSACTION (NOT_SUPPORTED).
	NoTransactions bool
	// JWT authenticates requests with Bearer JWTs instead of passwords
	// (jwtauth.go); Rules enforces a per-user access-control file
	// (access.go).
	JWT   *JWTAuth
	Rules *AccessRules
}

// maxRecorded bounds the recorded requests; the oldest are dropped first.
const maxRecorded = 100_000

// Option changes Options; used with Start.
type Option func(*Options)

// WithPageSize sets the number of rows per result page.
func WithPageSize(n int) Option { return func(o *Options) { o.PageSize = n } }

// WithTLS serves HTTPS with a self-signed certificate (see Server.CACertPEM).
func WithTLS() Option { return func(o *Options) { o.TLS = true } }

// WithPassword requires HTTP basic authentication and adds one user; it
// implies WithTLS, since Trino accepts passwords only over TLS.
func WithPassword(user, password string) Option {
	return func(o *Options) {
		o.TLS = true
		if o.Users == nil {
			o.Users = map[string]string{}
		}
		o.Users[user] = password
	}
}

// WithLargeTableRows sets the size of LargeTable (negative: no rows).
func WithLargeTableRows(n int) Option { return func(o *Options) { o.LargeTableRows = n } }

// WithoutSampleData starts with empty catalogs.
func WithoutSampleData() Option { return func(o *Options) { o.NoSampleData = true } }

// WithMaxWait sets how long a page request waits for data.
func WithMaxWait(d time.Duration) Option { return func(o *Options) { o.MaxWait = d } }

// WithAbandonAfter sets how long a query may go without a page request
// before the engine cancels it (Options.AbandonAfter).
func WithAbandonAfter(d time.Duration) Option { return func(o *Options) { o.AbandonAfter = d } }

// WithQueueTime keeps every query queued for d before it runs
// (Options.QueueTime).
// WithoutTransactions makes the engine refuse START TRANSACTION with
// NOT_SUPPORTED, as an engine that does not do transactions would.
func WithoutTransactions() Option { return func(o *Options) { o.NoTransactions = true } }

func WithQueueTime(d time.Duration) Option { return func(o *Options) { o.QueueTime = d } }

// Request is one HTTP request the server received.
type Request struct {
	Method string
	// Path is the URL path, e.g. /v1/statement or /v1/query/<id>.
	Path   string
	Header http.Header
	// Body is the request body of POST /v1/statement (the SQL text).
	Body string
	// QueryID is the query the request belongs to, if any (for a POST that
	// was refused, 401 or 503, the id that was never used).
	QueryID string
	// Status is the HTTP status of the answer (0 while it is being served).
	Status int
	Time   time.Time
}

// Server is a running test engine. Its methods are safe for concurrent use.
type Server struct {
	opts     Options
	db       *sql.DB
	listener net.Listener
	http     *http.Server
	scheme   string
	certPEM  []byte
	started  time.Time

	mu        sync.Mutex
	requests  []*Request
	cancelled []string
	queries   map[string]*query
	order     []string
	txs       map[string]*transaction
	// txStarters: who started each transaction ever started.
	txStarters map[string]TxStarter
	nextID     int64

	knownCatalogs sync.Map // catalog names known to exist (catalogExists)
	memLimitMu    sync.Mutex
	memLimit      int64 // DuckDB's memory_limit as last set by a query; 0: unknown

	unavailable atomic.Bool
	starting    atomic.Bool
	closing     chan struct{}
	wg          sync.WaitGroup
	closeOnce   sync.Once
}

// Start starts a Server for a test and closes it when the test ends. It
// fails the test if the server cannot start.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("trinotest: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// New starts a Server; call Close when done.
func New(opts Options) (*Server, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = time.Second
	}
	if opts.LargeTableRows == 0 {
		opts.LargeTableRows = LargeTableRows
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.AbandonAfter <= 0 {
		opts.AbandonAfter = 2 * time.Minute
	}
	if (len(opts.Users) > 0 || opts.JWT != nil) && !opts.TLS {
		return nil, errors.New("password authentication needs TLS (set Options.TLS), as in Trino")
	}
	db, err := openEngine()
	if err != nil {
		return nil, err
	}
	if err := loadSampleData(context.Background(), db, opts); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("load sample data: %w", err)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	s := &Server{
		opts:       opts,
		db:         db,
		scheme:     "http",
		started:    time.Now(),
		queries:    map[string]*query{},
		txs:        map[string]*transaction{},
		txStarters: map[string]TxStarter{},
		closing:    make(chan struct{}),
	}
	if opts.TLS {
		cert, pemBytes, err := selfSignedCert()
		if err != nil {
			_ = ln.Close()
			_ = db.Close()
			return nil, err
		}
		s.certPEM = pemBytes
		s.scheme = "https"
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	s.listener = ln
	s.http = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_ = s.http.Serve(ln)
	}()
	go func() {
		defer s.wg.Done()
		s.reapAbandoned()
	}()
	return s, nil
}

// Close cancels running queries, stops the listener and closes DuckDB.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closing)
		s.mu.Lock()
		for _, q := range s.queries {
			q.cancel()
		}
		for _, tx := range s.txs {
			tx.close()
		}
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = s.http.Shutdown(ctx)
		if err != nil {
			_ = s.http.Close()
		}
		s.wg.Wait()
		if cerr := s.db.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// URL is the base URL, e.g. http://127.0.0.1:40123.
func (s *Server) URL() string { return s.scheme + "://" + s.listener.Addr().String() }

// Host is the listen host, 127.0.0.1.
func (s *Server) Host() string {
	host, _, _ := net.SplitHostPort(s.listener.Addr().String())
	return host
}

// Port is the listen port.
func (s *Server) Port() int { return s.listener.Addr().(*net.TCPAddr).Port }

// TLS reports whether the server speaks HTTPS.
func (s *Server) TLS() bool { return s.opts.TLS }

// CACertPEM is the PEM of the self-signed certificate (nil without TLS).
func (s *Server) CACertPEM() []byte { return append([]byte(nil), s.certPEM...) }

// CertPool is a pool holding the server certificate (nil without TLS).
func (s *Server) CertPool() *x509.CertPool {
	if s.certPEM == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.certPEM)
	return pool
}

// HTTPClient returns an HTTP client that trusts the server certificate.
func (s *Server) HTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if s.certPEM != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: s.CertPool(), MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}
}

// DSN returns a trino-go-client data source name for user with catalog
// DefaultCatalog and schema DefaultSchema. With TLS it carries the
// certificate (SSLCert), and when user has a password (Options.Users) the
// password too. Append more parameters with "&k=v".
func (s *Server) DSN(user string) string {
	u := url.URL{Scheme: s.scheme, Host: s.listener.Addr().String()}
	if pw, ok := s.opts.Users[user]; ok {
		u.User = url.UserPassword(user, pw)
	} else {
		u.User = url.User(user)
	}
	q := url.Values{}
	q.Set("catalog", DefaultCatalog)
	q.Set("schema", DefaultSchema)
	if s.certPEM != nil {
		q.Set("SSLCert", string(s.certPEM))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
		out[i].Header = r.Header.Clone()
	}
	return out
}

// RequestsSince returns the requests received after the first n, oldest
// first: a cheap look at what one step sent (n from a len(Requests()) or
// RequestCount taken before it).
func (s *Server) RequestsSince(n int) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n > len(s.requests) {
		n = len(s.requests)
	}
	out := make([]Request, len(s.requests)-n)
	for i, r := range s.requests[n:] {
		out[i] = *r
		out[i].Header = r.Header.Clone()
	}
	return out
}

// RequestCount is the number of requests received so far.
func (s *Server) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Statements returns the POST /v1/statement requests, oldest first; their
// headers carry what Trino reads for a query (user, source, tags, ...).
func (s *Server) Statements() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/statement" {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests forgets the recorded requests and cancellations.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.cancelled = nil
}

// Cancelled returns the ids of queries that received DELETE /v1/query/{id}
// (or a DELETE on their nextUri), in order.
func (s *Server) Cancelled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cancelled...)
}

// LastQuery returns the newest query whose SQL is exactly sqlText, and
// fails t when the engine never saw one.
func (s *Server) LastQuery(t testing.TB, sqlText string) QueryInfo {
	t.Helper()
	qs := s.Queries()
	for i := len(qs) - 1; i >= 0; i-- {
		if qs[i].SQL == sqlText {
			return qs[i]
		}
	}
	t.Fatalf("the engine never saw %q", sqlText)
	return QueryInfo{}
}

// Queries returns what the engine knows of every query, oldest first.
func (s *Server) Queries() []QueryInfo {
	s.mu.Lock()
	qs := make([]*query, 0, len(s.order))
	for _, id := range s.order {
		qs = append(qs, s.queries[id])
	}
	s.mu.Unlock()
	out := make([]QueryInfo, len(qs))
	for i, q := range qs {
		out[i] = q.snapshot()
	}
	return out
}

// Query returns one query by id.
func (s *Server) Query(id string) (QueryInfo, bool) {
	s.mu.Lock()
	q, ok := s.queries[id]
	s.mu.Unlock()
	if !ok {
		return QueryInfo{}, false
	}
	return q.snapshot(), true
}

// WaitQuery waits until query id has ended (finished, failed or cancelled
// and its DuckDB execution stopped) or ctx is done.
func (s *Server) WaitQuery(ctx context.Context, id string) (QueryInfo, error) {
	s.mu.Lock()
	q, ok := s.queries[id]
	s.mu.Unlock()
	if !ok {
		return QueryInfo{}, fmt.Errorf("query %s is unknown", id)
	}
	select {
	case <-q.done:
		return q.snapshot(), nil
	case <-ctx.Done():
		return q.snapshot(), ctx.Err()
	}
}

// Exec runs SQL directly on DuckDB (not through the Trino protocol), e.g.
// to create fixtures with hostile names. Use DuckDB syntax and fully
// qualified names (catalog.schema.table).
func (s *Server) Exec(ctx context.Context, sqlText string) error {
	// It may detach a catalog or set memory_limit: forget both.
	s.knownCatalogs.Clear()
	s.memLimitMu.Lock()
	s.memLimit = 0
	s.memLimitMu.Unlock()
	_, err := s.db.ExecContext(ctx, sqlText)
	return err
}

// AddCatalog adds an empty catalog (an in-memory DuckDB database with the
// information_schema views); fill it with Exec.
func (s *Server) AddCatalog(ctx context.Context, name string) error {
	if isHiddenCatalog(name) || name == "" {
		return fmt.Errorf("catalog name %q is reserved", name)
	}
	return createCatalog(ctx, s.db, name)
}

// SetStarting makes GET /v1/info report "starting": true (the driver's
// Ping then fails, as against a coordinator that is still starting).
func (s *Server) SetStarting(starting bool) { s.starting.Store(starting) }

// SetUnavailable makes every request answer 503 Service Unavailable (true)
// or serves normally again (false), to test an engine that is down.
func (s *Server) SetUnavailable(down bool) { s.unavailable.Store(down) }

// reapAbandoned cancels queries whose client went away.
func (s *Server) reapAbandoned() {
	tick := time.NewTicker(min(s.opts.AbandonAfter/4, 5*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		var stale []*query
		for _, q := range s.queries {
			if q.idleSince(s.opts.AbandonAfter) {
				stale = append(stale, q)
			}
		}
		s.mu.Unlock()
		for _, q := range stale {
			q.abandon()
		}
	}
}

func (s *Server) record(r *http.Request, body, queryID string) *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) >= maxRecorded {
		s.requests = append(s.requests[:0], s.requests[len(s.requests)-maxRecorded/2:]...)
	}
	rec := &Request{
		Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body,
		QueryID: queryID, Time: time.Now(),
	}
	s.requests = append(s.requests, rec)
	return rec
}

// statusRecorder remembers the status of an answer for Request.Status.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var body string
	if r.Method == http.MethodPost {
		b, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		body = string(b)
	}
	queryID := queryIDFromPath(r.URL.Path)
	if r.Method == http.MethodPost && r.URL.Path == "/v1/statement" {
		queryID = s.newQueryID()
	}
	rec := s.record(r, body, queryID)
	sw := &statusRecorder{ResponseWriter: w}
	w = sw
	defer func() {
		s.mu.Lock()
		rec.Status = sw.status
		s.mu.Unlock()
	}()
	if s.opts.JWT != nil && s.opts.JWT.serveExternal(w, r) {
		return
	}

	if s.unavailable.Load() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the test engine is unavailable (SetUnavailable)", http.StatusServiceUnavailable)
		return
	}
	path := r.URL.Path
	// Like Trino, /v1/info answers without credentials (health checks).
	principal := r.Header.Get("X-Trino-User")
	if path != "/v1/info" {
		var ok bool
		if principal, ok = s.authenticate(w, r); !ok {
			return
		}
	}
	switch {
	case path == "/v1/info" && r.Method == http.MethodGet:
		s.serveInfo(w)
	case path == "/v1/statement" && r.Method == http.MethodHead:
		w.WriteHeader(http.StatusOK)
	case path == "/v1/statement" && r.Method == http.MethodPost:
		s.submit(w, r, queryID, body, principal)
	case strings.HasPrefix(path, "/v1/statement/executing/") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.nextPage(w, r)
	case strings.HasPrefix(path, "/v1/statement/executing/") && r.Method == http.MethodDelete,
		strings.HasPrefix(path, "/v1/query/") && r.Method == http.MethodDelete:
		s.cancelQuery(w, queryID)
	case strings.HasPrefix(path, "/v1/query/") && r.Method == http.MethodGet:
		s.serveQueryInfo(w, queryID)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such endpoint in the trinotest engine: " + r.Method + " " + path})
	}
}

// authenticate checks basic credentials when users are configured and
// returns the authenticated principal (or X-Trino-User without auth).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	if s.opts.JWT != nil {
		return s.opts.JWT.authenticate(s, w, r)
	}
	if len(s.opts.Users) == 0 {
		return r.Header.Get("X-Trino-User"), true
	}
	user, pass, ok := r.BasicAuth()
	if ok {
		want, known := s.opts.Users[user]
		if known && subtle.ConstantTimeCompare([]byte(want), []byte(pass)) == 1 {
			return user, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="Trino"`)
	http.Error(w, "Unauthorized: invalid credentials", http.StatusUnauthorized)
	return "", false
}

func (s *Server) serveInfo(w http.ResponseWriter) {
	up := time.Since(s.started)
	writeJSON(w, http.StatusOK, map[string]any{
		"nodeVersion": map[string]string{"version": Version},
		"environment": "trinotest",
		"coordinator": true,
		"starting":    s.starting.Load(),
		"uptime":      fmt.Sprintf("%.2fm", up.Minutes()),
	})
}

func (s *Server) serveQueryInfo(w http.ResponseWriter, id string) {
	info, ok := s.Query(id)
	if !ok {
		http.Error(w, "Query not found", http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) cancelQuery(w http.ResponseWriter, id string) {
	s.mu.Lock()
	q, ok := s.queries[id]
	if ok {
		s.cancelled = append(s.cancelled, id)
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "Query not found", http.StatusNotFound)
		return
	}
	q.userCancel()
	w.WriteHeader(http.StatusNoContent)
	// Free the last data page once a concurrent page request is done.
	go func() {
		q.serveMu.Lock()
		defer q.serveMu.Unlock()
		q.last, q.lastHdr = nil, nil
	}()
}

// queryIDFromPath extracts the query id of /v1/statement/executing/{id}/...
// and /v1/query/{id}.
func queryIDFromPath(p string) string {
	for _, prefix := range []string{"/v1/statement/executing/", "/v1/query/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			id, _, _ := strings.Cut(rest, "/")
			return id
		}
	}
	return ""
}

func (s *Server) newQueryID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprintf("%s_%05d_trinotest", time.Now().UTC().Format("20060102_150405"), s.nextID)
}

func (s *Server) pageURI(id string, token int64) string {
	return s.URL() + "/v1/statement/executing/" + id + "/" + strconv.FormatInt(token, 10)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Dump returns the definition and contents of every table and view of
// catalog.schema, read directly from DuckDB: not through the protocol, so
// it is neither recorded nor subject to the engine's rules. Tests compare
// dumps taken before and after a call to prove it changed nothing. A schema
// that does not exist dumps as "schema absent".
func (s *Server) Dump(ctx context.Context, catalog, schema string) (string, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_schemas() WHERE database_name = ? AND schema_name = ?", catalog, schema).Scan(&n); err != nil {
		return "", err
	}
	if n == 0 {
		return "schema absent", nil
	}
	var b strings.Builder
	rows, err := s.db.QueryContext(ctx, "SELECT table_name, 'table', '' FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? "+
		"UNION ALL SELECT view_name, 'view', sql FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND NOT internal ORDER BY 1",
		catalog, schema, catalog, schema)
	if err != nil {
		return "", err
	}
	type rel struct{ name, kind, sql string }
	var rels []rel
	for rows.Next() {
		var r rel
		if err := rows.Scan(&r.name, &r.kind, &r.sql); err != nil {
			rows.Close()
			return "", err
		}
		rels = append(rels, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, r := range rels {
		full := quoteIdent(catalog) + "." + quoteIdent(schema) + "." + quoteIdent(r.name)
		fmt.Fprintf(&b, "%s %s", r.kind, r.name)
		if r.kind == "view" {
			fmt.Fprintf(&b, " AS %s\n", r.sql)
			continue
		}
		cols, err := s.db.QueryContext(ctx, "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? AND table_name = ? ORDER BY column_index",
			catalog, schema, r.name)
		if err != nil {
			return "", err
		}
		for cols.Next() {
			var c, t string
			if err := cols.Scan(&c, &t); err != nil {
				cols.Close()
				return "", err
			}
			fmt.Fprintf(&b, " %s:%s", c, t)
		}
		cols.Close()
		b.WriteString("\n")
		data, err := s.db.QueryContext(ctx, "SELECT * FROM "+full+" ORDER BY ALL")
		if err != nil {
			return "", err
		}
		ncol, _ := data.Columns()
		for data.Next() {
			vals := make([]any, len(ncol))
			ptrs := make([]any, len(ncol))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := data.Scan(ptrs...); err != nil {
				data.Close()
				return "", err
			}
			fmt.Fprintf(&b, "  %v\n", vals)
		}
		data.Close()
		if err := data.Err(); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// TransactionEnds counts, among reqs, the START TRANSACTION READ ONLY
// statements submitted and the ROLLBACKs whose poll was answered (the
// transaction has then ended on the engine).
func TransactionEnds(reqs []Request) (starts, rollbacks int) {
	rollback := map[string]bool{}
	for _, r := range reqs {
		switch {
		case r.Method == http.MethodPost && r.Body == "START TRANSACTION READ ONLY":
			starts++
		case r.Method == http.MethodPost && r.Body == "ROLLBACK":
			rollback[r.QueryID] = true
		case r.Method == http.MethodGet && rollback[r.QueryID] && r.Status != 0:
			rollbacks++
		}
	}
	return starts, rollbacks
}

// TxStarter is who started a transaction: its START's session.
type TxStarter struct {
	User, ClientTags, ClientInfo string
}

// TransactionStarter says who started transaction id (open or ended).
func (s *Server) TransactionStarter(id string) (TxStarter, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.txStarters[id]
	return st, ok
}

// ForgetTransactions rolls back every open transaction and forgets its
// id, as a restarted coordinator has: a statement naming one then fails
// UNKNOWN_TRANSACTION. It returns how many there were.
func (s *Server) ForgetTransactions() int {
	s.mu.Lock()
	txs := s.txs
	s.txs = map[string]*transaction{}
	s.mu.Unlock()
	for _, tx := range txs {
		tx.close()
	}
	return len(txs)
}

// OpenTransactions is the number of transactions started (START
// TRANSACTION) and not yet ended by COMMIT or ROLLBACK.
func (s *Server) OpenTransactions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.txs)
}
