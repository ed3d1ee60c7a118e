// Package config reads sqlmcp's own server configuration: the SQLENGINE_*
// variables (connection settings also from the connection-profile file,
// with the CLI's precedence) and the task variables. serve.Program reads
// the shared MCP_*, OAUTH_* and LOG_* variables with the same reader, so
// one start-up names every bad variable.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/tasks"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/profile"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
)

// Impersonation fields and the token claims they read.
const (
	FieldUsername = "username" // preferred_username
	FieldEmail    = "email"    // email
	FieldSubject  = "subject"  // sub
)

// Config is sqlmcp's own configuration.
type Config struct {
	Engine engine.Config
	// Tasks bounds execute_query's MCP tasks (HTTP only): MCP_TASK_TTL,
	// MCP_MAX_TASKS.
	Tasks tasks.Config

	AllowWrites    bool
	AllowedSchemas *sqlguard.Scope
	MaxRows        int // default rows of execute_query
	MaxRowsCeiling int // the most rows a call's limit may ask for

	Impersonation      bool
	ImpersonationField string // FieldUsername, FieldEmail or FieldSubject

	// Auth is how sqlmcp authenticates to Trino (SQLENGINE_AUTH); the
	// token source it needs is Engine.Token (nil with password).
	Auth trinoauth.Mode
	// Exchanger is Engine.Token with token-exchange (nil otherwise).
	Exchanger *trinoauth.Exchanger

	// Clusters are the Trino clusters (SQLENGINE_CLUSTERS; one, named
	// envconfig.DefaultName, without it), the default first. Engine,
	// AllowedSchemas, Auth, Exchanger and Profile above are the first's.
	Clusters []Cluster
	Fleet    *envconfig.Fleet
	// CursorTTL and CursorsPerCaller bound execute_query's open cursors
	// (SQLENGINE_CURSOR_TTL, SQLENGINE_CURSORS_PER_CALLER).
	CursorTTL        time.Duration
	CursorsPerCaller int
	// MaxScanBytes and MaxScanRows are the first cluster's read budgets
	// (0: none); each cluster has its own in Clusters.
	MaxScanBytes, MaxScanRows int64

	// Profile is the connection profile used ("" when none) and where its
	// name came from; ConfigPath is the profile file consulted.
	Profile, ProfileFrom, ConfigPath string
}

// Vars documents sqlmcp's own variables for --help and the README, and
// the task variables (execute_query as an MCP task over HTTP).
var Vars = append([]envconfig.Var{
	{Name: "SQLENGINE_HOST", Default: "localhost", Description: "Trino coordinator host"},
	{Name: "SQLENGINE_PORT", Default: "8080", Description: "Trino coordinator port"},
	{Name: "SQLENGINE_USER", Default: "sqlmcp", Description: "user queries run as (X-Trino-User)"},
	{Name: "SQLENGINE_PASSWORD", Secret: true, Description: "password (HTTP basic auth over TLS; environment or profile file only)"},
	{Name: "SQLENGINE_CATALOG", Description: "default catalog"},
	{Name: "SQLENGINE_SCHEMA", Description: "default schema"},
	{Name: "SQLENGINE_SSL", Default: "false", Description: "true connects with TLS (https)"},
	{Name: "SQLENGINE_SSL_INSECURE", Default: "false", Description: "true skips verification of the coordinator's certificate (testing only)"},
	{Name: "SQLENGINE_SCHEME", Default: "follows SQLENGINE_SSL", Description: "http or https"},
	{Name: "SQLENGINE_SOURCE", Default: "sqlmcp", Description: "X-Trino-Source of every query"},
	{Name: "SQLENGINE_ALLOWED_SCHEMAS", Description: "comma-separated catalog.schema list; listings, descriptions and queries are confined to it"},
	{Name: "SQLENGINE_ALLOW_WRITE_QUERIES", Default: "false", Description: "true lets execute_query run statements that change data or the catalog"},
	{Name: "SQLENGINE_MAX_ROWS", Default: "1000", Description: "rows execute_query returns when the call gives no limit"},
	{Name: "SQLENGINE_MAX_ROWS_CEILING", Default: "10000", Description: "the most rows a call's limit may ask for"},
	{Name: "SQLENGINE_MAX_RESULT_BYTES", Default: "1048576", Description: "cap on the JSON bytes of one result's rows (truncated is set when it applies)"},
	{Name: "SQLENGINE_QUERY_TIMEOUT", Default: "300s", Description: "time limit of one query; it is cancelled on the engine when it expires"},
	{Name: "SQLENGINE_QUERY_MAX_MEMORY", Default: "1GB", Description: "distributed memory one query may use on the engine (query_max_memory; B, kB, MB, GB, TB)"},
	{Name: "SQLENGINE_ENABLE_IMPERSONATION", Default: "false", Description: "with OAuth on HTTP, run each query as the caller (X-Trino-User)"},
	{Name: "SQLENGINE_IMPERSONATION_FIELD", Default: "username", Description: "claim used as the engine user: username (preferred_username), email or subject (sub)"},
	{Name: "SQLENGINE_AUTH", Default: "password", Description: "how sqlmcp authenticates to Trino: password, jwt (a static JWT), token-exchange (each caller's OAuth token exchanged for one for Trino, RFC 8693) or external (SQL shell only)"},
	{Name: "SQLENGINE_JWT", Secret: true, Description: "with SQLENGINE_AUTH=jwt: the JWT sent to Trino as Authorization: Bearer"},
	{Name: "SQLENGINE_JWT_FILE", Description: "with SQLENGINE_AUTH=jwt: a file (no group/other permissions) holding the JWT, instead of SQLENGINE_JWT"},
	{Name: "SQLENGINE_TOKEN_EXCHANGE_URL", Description: "with SQLENGINE_AUTH=token-exchange: the identity provider's token endpoint (https; http only on a loopback host)"},
	{Name: "SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID", Description: "with SQLENGINE_AUTH=token-exchange: sqlmcp's client id at the identity provider"},
	{Name: "SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET", Secret: true, Description: "with SQLENGINE_AUTH=token-exchange: sqlmcp's client secret at the identity provider"},
	{Name: "SQLENGINE_TOKEN_EXCHANGE_AUDIENCE", Description: "with SQLENGINE_AUTH=token-exchange: Trino's audience (its http-server.authentication.jwt.required-audience)"},
	{Name: "SQLENGINE_TOKEN_EXCHANGE_SCOPE", Description: "with SQLENGINE_AUTH=token-exchange: scope asked for in the exchange (optional)"},
	{Name: "SQLENGINE_CLUSTERS", Description: "comma-separated names of several Trino clusters; each reads SQLENGINE_<NAME>_<VAR> (HOST, PORT, USER, PASSWORD, CATALOG, SCHEMA, SSL, SSL_INSECURE, SCHEME, SOURCE, ALLOWED_SCHEMAS, MAX_RESULT_BYTES, QUERY_TIMEOUT, QUERY_MAX_MEMORY, PROFILE, AUTH, JWT, JWT_FILE, TOKEN_EXCHANGE_*, MAX_SCAN_BYTES, MAX_SCAN_ROWS) before SQLENGINE_<VAR>; the first is the default of a call without cluster"},
	{Name: "SQLENGINE_CURSOR_TTL", Default: "4m", Description: "how long a query with more rows stays open for fetch_more; then it is cancelled on the engine (keep it below Trino's query.client.timeout, default 5m, and raise both together)"},
	{Name: "SQLENGINE_TX_AHEAD", Default: "30s", Description: "a caller's next read-only transaction is begun as soon as their last one ended, so its START is off their next query's path; one no query took within this time is rolled back (0: begin each with its query; keep it below Trino's transaction.idle-timeout, default 5m)"},
	{Name: "SQLENGINE_CURSORS_PER_CALLER", Default: "8", Description: "open cursors one caller may hold; a new one beyond it ends that caller's least recently used"},
	{Name: "SQLENGINE_MAX_SCAN_BYTES", Default: "none", Description: "read budget: a statement the engine estimates to read more bytes (EXPLAIN (TYPE IO)), or whose estimate is unknown, runs only after a person approves it, and is refused with the estimate when MCP_APPROVAL=none (a data size such as 10GB)"},
	{Name: "SQLENGINE_MAX_SCAN_ROWS", Default: "none", Description: "read budget in rows, judged like SQLENGINE_MAX_SCAN_BYTES"},
	{Name: "SQLENGINE_PROFILE", Description: "connection profile of ~/.config/sqlengine/config.json|yaml to use"},
}, tasks.Vars...)

// Read reads sqlmcp's variables from r, as serve.Program.Configure's own
// step, recording their problems there. getenv is r's: profile.Resolve
// reads the connection variables with the profile file's precedence. The
// error is a problem with the profile file when it is the only problem
// (it names the file); with others it is recorded in r and listed with
// them.
func Read(r *envconfig.Reader, getenv func(string) string) (Config, error) {
	var c Config
	c.Tasks = tasks.FromEnv(r)

	// Fleet-wide: what the tools' schemas and the caller rules depend on.
	c.AllowWrites = r.Bool("SQLENGINE_ALLOW_WRITE_QUERIES", false)
	ceiling := r.Int("SQLENGINE_MAX_ROWS_CEILING", 10000, 1, 10_000_000)
	c.MaxRows = r.Int("SQLENGINE_MAX_ROWS", engine.DefaultMaxRows, 1, 10_000_000)
	c.MaxRowsCeiling = ceiling
	if c.MaxRows > ceiling {
		r.Fail("SQLENGINE_MAX_ROWS", r.Lookup("SQLENGINE_MAX_ROWS"), fmt.Sprintf("at most SQLENGINE_MAX_ROWS_CEILING (%d)", ceiling))
	}
	// Cursors apply to every cluster alike (one store: a cursor names its
	// own cluster's query); read budgets are per cluster.
	c.CursorTTL = r.Duration("SQLENGINE_CURSOR_TTL", 4*time.Minute, time.Second)
	c.CursorsPerCaller = r.Int("SQLENGINE_CURSORS_PER_CALLER", 8, 1, 1000)
	txAhead := r.Duration("SQLENGINE_TX_AHEAD", 30*time.Second, 0)
	c.Impersonation = r.Bool("SQLENGINE_ENABLE_IMPERSONATION", false)
	c.ImpersonationField = r.Enum("SQLENGINE_IMPERSONATION_FIELD", FieldUsername, FieldUsername, FieldEmail, FieldSubject)
	oauth, _ := envconfig.ParseBool(r.Lookup("OAUTH_ENABLED"))
	if c.Impersonation && !oauth {
		r.Fail("SQLENGINE_ENABLE_IMPERSONATION", "true", "true only with OAUTH_ENABLED=true on the HTTP transport (the caller comes from the token)")
	}

	fleet := Clusters.Read(r)
	c.Fleet = fleet
	var firstErr error
	for _, name := range fleet.Names {
		m := fleet.Member(name)
		cl, err := readCluster(m, c.MaxRows, c.AllowWrites, c.Impersonation, oauth, !fleet.Named)
		m.Done()
		cl.Engine.TxAhead = txAhead
		if err != nil && firstErr == nil {
			firstErr = err
		}
		c.Clusters = append(c.Clusters, cl)
	}
	if len(c.Clusters) == 0 { // every name refused: recorded in r
		c.Clusters = []Cluster{{Name: envconfig.DefaultName, AllowedSchemas: &sqlguard.Scope{}}}
	}
	first := c.Clusters[0]
	c.Engine, c.AllowedSchemas, c.Auth, c.Exchanger = first.Engine, first.AllowedSchemas, first.Auth, first.Exchanger
	c.MaxScanBytes, c.MaxScanRows = first.MaxScanBytes, first.MaxScanRows
	c.Profile, c.ProfileFrom, c.ConfigPath = first.Profile, first.ProfileFrom, first.ConfigPath
	if firstErr != nil {
		if r.Err() != nil {
			r.Report(firstErr)
			return c, nil
		}
		return c, firstErr
	}
	return c, nil
}

// Clusters is sqlmcp's member grammar: SQLENGINE_CLUSTERS=prod,dev and,
// per cluster, SQLENGINE_<NAME>_<VAR> for each of ClusterVars, falling
// back to SQLENGINE_<VAR>. A call without cluster uses the first one.
var Clusters = envconfig.Members{Prefix: "SQLENGINE", List: "CLUSTERS", Noun: "cluster", Own: ClusterVars, Target: envconfig.FirstMember}

// ClusterVars are the variables a cluster may set for itself.
var ClusterVars = []string{
	"SQLENGINE_HOST", "SQLENGINE_PORT", "SQLENGINE_USER", "SQLENGINE_PASSWORD",
	"SQLENGINE_CATALOG", "SQLENGINE_SCHEMA", "SQLENGINE_SSL", "SQLENGINE_SSL_INSECURE", "SQLENGINE_SCHEME",
	"SQLENGINE_SOURCE", "SQLENGINE_ALLOWED_SCHEMAS", "SQLENGINE_MAX_RESULT_BYTES", "SQLENGINE_QUERY_TIMEOUT",
	"SQLENGINE_QUERY_MAX_MEMORY", "SQLENGINE_PROFILE",
	"SQLENGINE_AUTH", "SQLENGINE_JWT", "SQLENGINE_JWT_FILE", "SQLENGINE_TOKEN_EXCHANGE_URL",
	"SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID", "SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET",
	"SQLENGINE_TOKEN_EXCHANGE_AUDIENCE", "SQLENGINE_TOKEN_EXCHANGE_SCOPE",
	"SQLENGINE_MAX_SCAN_BYTES", "SQLENGINE_MAX_SCAN_ROWS",
}

// Cluster is one Trino cluster's configuration.
type Cluster struct {
	Name           string // envconfig.DefaultName without SQLENGINE_CLUSTERS
	Engine         engine.Config
	AllowedSchemas *sqlguard.Scope
	Auth           trinoauth.Mode
	Exchanger      *trinoauth.Exchanger // with token-exchange
	// MaxScanBytes and MaxScanRows are the cluster's read budgets (0:
	// none).
	MaxScanBytes, MaxScanRows int64

	Profile, ProfileFrom, ConfigPath string
}

// readCluster reads one cluster's variables through m (its own, else the
// shared ones).
func readCluster(m *envconfig.Member, maxRows int, allowWrites, impersonation, oauth, strict bool) (Cluster, error) {
	r := m.Reader
	cl := Cluster{Name: m.Name}
	// Validate the connection variables here so that their problems are
	// reported with the others; profile.Resolve applies the precedence.
	r.Int("SQLENGINE_PORT", engine.DefaultPort, 1, 65535)
	envSSL := r.Bool("SQLENGINE_SSL", false)
	r.Bool("SQLENGINE_SSL_INSECURE", false)
	scheme := r.Enum("SQLENGINE_SCHEME", "", "http", "https")
	maxBytes := r.Int64("SQLENGINE_MAX_RESULT_BYTES", engine.DefaultMaxResultBytes, 1024, 1<<34)
	timeout := r.Duration("SQLENGINE_QUERY_TIMEOUT", engine.DefaultQueryTimeout, time.Second)
	maxMemory := r.String("SQLENGINE_QUERY_MAX_MEMORY", engine.DefaultQueryMaxMemory)
	if _, err := engine.ParseDataSize(maxMemory); err != nil {
		r.Fail("SQLENGINE_QUERY_MAX_MEMORY", maxMemory, "a data size of at least 1MB such as 512MB or 2GB")
	}
	source := r.String("SQLENGINE_SOURCE", engine.DefaultSource)
	scope, err := sqlguard.ParseScope(r.List("SQLENGINE_ALLOWED_SCHEMAS", nil))
	if err != nil {
		r.Fail("SQLENGINE_ALLOWED_SCHEMAS", r.Lookup("SQLENGINE_ALLOWED_SCHEMAS"), "comma-separated catalog.schema names ("+err.Error()+")")
		scope = &sqlguard.Scope{}
	}
	cl.AllowedSchemas = scope
	if v := r.String("SQLENGINE_MAX_SCAN_BYTES", ""); v != "" && v != "none" {
		n, err := engine.ParseDataSize(v)
		if err != nil {
			r.Fail("SQLENGINE_MAX_SCAN_BYTES", v, "a data size of at least 1MB such as 500GB, or none")
		}
		cl.MaxScanBytes = n
	}
	cl.MaxScanRows = r.Int64("SQLENGINE_MAX_SCAN_ROWS", 0, 0, 1<<62)

	conn, perr := profile.Resolve(r.Secret, profile.Flags{})
	var envErr *profile.EnvError
	if perr != nil && !errors.As(perr, &envErr) { // env problems are already recorded
		return cl, perr
	}
	cl.Profile, cl.ProfileFrom, cl.ConfigPath = conn.Profile, conn.ProfileFrom, conn.ConfigPath
	cl.Engine = engine.Config{
		Host: conn.Host, Port: conn.Port, User: conn.User, Password: conn.Password,
		Catalog: conn.Catalog, Schema: conn.Schema,
		SSL: conn.SSL, SSLInsecure: conn.Insecure, Scheme: scheme,
		Source: source, MaxRows: maxRows, MaxResultBytes: maxBytes, QueryTimeout: timeout,
		QueryMaxMemory: maxMemory,
		// Defence in depth for a read-only server: the engine refuses writes too.
		ReadOnlyTransactions: !allowWrites,
	}
	switch {
	case scheme == "http" && r.Lookup("SQLENGINE_SSL") != "" && envSSL:
		r.Fail("SQLENGINE_SCHEME", scheme, "https, or unset, when SQLENGINE_SSL=true")
	case conn.Password != "" && !strings.HasPrefix(cl.Engine.URL(), "https:"):
		r.FailSecret("SQLENGINE_PASSWORD", conn.Password, "a password only with TLS: set SQLENGINE_SSL=true (or ssl.enabled in the profile)")
	}
	if conn.Schema != "" && conn.Catalog == "" {
		r.Fail("SQLENGINE_SCHEMA", conn.Schema, "a schema only together with SQLENGINE_CATALOG")
	}
	readAuth(r, &cl, conn.Password, oauth, impersonation, strict)
	return cl, nil
}

// readAuth reads SQLENGINE_AUTH and the variables of its mode into c,
// recording every problem in r.
//
// strict (one unnamed cluster) refuses variables of another mode; with
// SQLENGINE_CLUSTERS the shared ones are the defaults of the clusters
// using that mode, so one cluster's mode does not refuse them.
func readAuth(r *envconfig.Reader, c *Cluster, password string, oauth, impersonation, strict bool) {
	mode, err := trinoauth.ParseMode(r.Lookup("SQLENGINE_AUTH"))
	if err != nil {
		r.Fail("SQLENGINE_AUTH", r.Lookup("SQLENGINE_AUTH"), "password, jwt, token-exchange or external")
		return
	}
	c.Auth = mode
	jwtValue, jwtFile := r.Secret("SQLENGINE_JWT"), r.String("SQLENGINE_JWT_FILE", "")
	exURL := r.String("SQLENGINE_TOKEN_EXCHANGE_URL", "")
	exID, exSecret := r.String("SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID", ""), r.Secret("SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET")
	exAud, exScope := r.String("SQLENGINE_TOKEN_EXCHANGE_AUDIENCE", ""), r.String("SQLENGINE_TOKEN_EXCHANGE_SCOPE", "")
	if mode != trinoauth.ModeJWT && strict {
		if jwtValue != "" {
			r.FailSecret("SQLENGINE_JWT", jwtValue, "only with SQLENGINE_AUTH=jwt")
		}
		if jwtFile != "" {
			r.Fail("SQLENGINE_JWT_FILE", jwtFile, "only with SQLENGINE_AUTH=jwt")
		}
	}
	if mode != trinoauth.ModeTokenExchange && strict {
		for _, n := range []string{"SQLENGINE_TOKEN_EXCHANGE_URL", "SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID", "SQLENGINE_TOKEN_EXCHANGE_AUDIENCE", "SQLENGINE_TOKEN_EXCHANGE_SCOPE"} {
			if v := r.Lookup(n); v != "" {
				r.Fail(n, v, "only with SQLENGINE_AUTH=token-exchange")
			}
		}
		if exSecret != "" {
			r.FailSecret("SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET", exSecret, "only with SQLENGINE_AUTH=token-exchange")
		}
	}
	if mode == trinoauth.ModePassword {
		return
	}
	if password != "" {
		r.FailSecret("SQLENGINE_PASSWORD", password, "empty with SQLENGINE_AUTH="+string(mode)+" (Trino gets a bearer token instead of a password)")
	}
	if !strings.HasPrefix(c.Engine.URL(), "https:") {
		r.Fail("SQLENGINE_AUTH", string(mode), "password, or set SQLENGINE_SSL=true: a bearer token is a credential and only goes over TLS (Trino authenticates only over HTTPS)")
	}
	switch mode {
	case trinoauth.ModeExternal:
		r.Fail("SQLENGINE_AUTH", string(mode), "password, jwt or token-exchange in the MCP server (external is browser login for the SQL shell: set it in a connection profile)")
	case trinoauth.ModeJWT:
		src, err := trinoauth.LoadJWT(jwtValue, jwtFile)
		if err != nil {
			if jwtFile != "" {
				r.Fail("SQLENGINE_JWT_FILE", jwtFile, "a readable file holding one JWT, without group/other permissions ("+err.Error()+")")
			} else {
				r.FailSecret("SQLENGINE_JWT", jwtValue, "exactly one of SQLENGINE_JWT or SQLENGINE_JWT_FILE, holding one JWT ("+err.Error()+")")
			}
			return
		}
		c.Engine.Token = src
	case trinoauth.ModeTokenExchange:
		if !oauth {
			r.Fail("SQLENGINE_AUTH", string(mode), "token-exchange only with OAUTH_ENABLED=true on the HTTP transport (the caller's access token is what is exchanged)")
		}
		if p := r.Lookup("OAUTH_PROVIDER"); p == "hmac" {
			r.Fail("SQLENGINE_AUTH", string(mode), "token-exchange only with an identity provider (OAUTH_PROVIDER oidc, okta, google or azure): hmac tokens cannot be exchanged")
		}
		if impersonation {
			r.Fail("SQLENGINE_ENABLE_IMPERSONATION", "true", "false with SQLENGINE_AUTH=token-exchange: the Trino principal comes from the exchanged token; impersonation is for password and jwt")
		}
		if exURL == "" {
			r.Fail("SQLENGINE_TOKEN_EXCHANGE_URL", "", "required with SQLENGINE_AUTH=token-exchange: the identity provider's token endpoint")
		} else if !exchangeURLOK(exURL) {
			r.Fail("SQLENGINE_TOKEN_EXCHANGE_URL", exURL, "an https URL (http only on a loopback host) without credentials, query or fragment")
		}
		if exID == "" {
			r.Fail("SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID", "", "required with SQLENGINE_AUTH=token-exchange: sqlmcp's client id at the identity provider")
		}
		if exSecret == "" {
			r.FailSecret("SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET", "", "required with SQLENGINE_AUTH=token-exchange: sqlmcp's client secret at the identity provider")
		}
		if exAud == "" {
			r.Fail("SQLENGINE_TOKEN_EXCHANGE_AUDIENCE", "", "required with SQLENGINE_AUTH=token-exchange: Trino's audience (http-server.authentication.jwt.required-audience)")
		}
		c.Exchanger = &trinoauth.Exchanger{URL: exURL, ClientID: exID, ClientSecret: exSecret, Audience: exAud, Scope: exScope}
		c.Engine.Token = c.Exchanger
		c.Engine.TokenPerCaller = true
	}
}

// exchangeURLOK accepts https URLs, and http on a loopback host.
func exchangeURLOK(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		if h == "localhost" {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}
