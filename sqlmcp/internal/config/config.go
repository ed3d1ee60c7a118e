// Package config reads sqlmcp's own server configuration: the SQLENGINE_*
// variables (connection settings also from the connection-profile file,
// with the CLI's precedence) and the task variables. serve.Program reads
// the shared MCP_*, OAUTH_* and LOG_* variables with the same reader, so
// one start-up names every bad variable.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/tasks"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/profile"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
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

	// CursorTTL and CursorsPerCaller bound execute_query's open cursors
	// (SQLENGINE_CURSOR_TTL, SQLENGINE_CURSORS_PER_CALLER).
	CursorTTL        time.Duration
	CursorsPerCaller int
	// MaxScanBytes and MaxScanRows are the read budgets (0: none).
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
	{Name: "SQLENGINE_CURSOR_TTL", Default: "4m", Description: "how long a query with more rows stays open for fetch_more; then it is cancelled on the engine (keep it below Trino's query.client.timeout, default 5m, and raise both together)"},
	{Name: "SQLENGINE_CURSORS_PER_CALLER", Default: "8", Description: "open cursors one caller may hold; a new one beyond it ends that caller's least recently used"},
	{Name: "SQLENGINE_MAX_SCAN_BYTES", Default: "none", Description: "read budget: a statement the engine estimates to read more bytes (EXPLAIN (TYPE IO)), or whose estimate is unknown, is refused with the estimate (a data size such as 10GB)"},
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

	// Validate the connection variables here so that their problems are
	// reported with the others; profile.Resolve applies the precedence.
	r.Int("SQLENGINE_PORT", engine.DefaultPort, 1, 65535)
	envSSL := r.Bool("SQLENGINE_SSL", false)
	r.Bool("SQLENGINE_SSL_INSECURE", false)
	scheme := r.Enum("SQLENGINE_SCHEME", "", "http", "https")

	c.AllowWrites = r.Bool("SQLENGINE_ALLOW_WRITE_QUERIES", false)
	ceiling := r.Int("SQLENGINE_MAX_ROWS_CEILING", 10000, 1, 10_000_000)
	c.MaxRows = r.Int("SQLENGINE_MAX_ROWS", engine.DefaultMaxRows, 1, 10_000_000)
	c.MaxRowsCeiling = ceiling
	if c.MaxRows > ceiling {
		r.Fail("SQLENGINE_MAX_ROWS", r.Lookup("SQLENGINE_MAX_ROWS"), fmt.Sprintf("at most SQLENGINE_MAX_ROWS_CEILING (%d)", ceiling))
	}
	maxBytes := r.Int64("SQLENGINE_MAX_RESULT_BYTES", engine.DefaultMaxResultBytes, 1024, 1<<34)
	timeout := r.Duration("SQLENGINE_QUERY_TIMEOUT", engine.DefaultQueryTimeout, time.Second)
	maxMemory := r.String("SQLENGINE_QUERY_MAX_MEMORY", engine.DefaultQueryMaxMemory)
	if _, err := engine.ParseDataSize(maxMemory); err != nil {
		r.Fail("SQLENGINE_QUERY_MAX_MEMORY", maxMemory, "a data size of at least 1MB such as 512MB or 2GB")
	}
	source := r.String("SQLENGINE_SOURCE", engine.DefaultSource)
	c.CursorTTL = r.Duration("SQLENGINE_CURSOR_TTL", 4*time.Minute, time.Second)
	c.CursorsPerCaller = r.Int("SQLENGINE_CURSORS_PER_CALLER", 8, 1, 1000)
	if v := r.String("SQLENGINE_MAX_SCAN_BYTES", ""); v != "" && v != "none" {
		n, err := engine.ParseDataSize(v)
		if err != nil {
			r.Fail("SQLENGINE_MAX_SCAN_BYTES", v, "a data size of at least 1MB such as 500GB, or none")
		}
		c.MaxScanBytes = n
	}
	c.MaxScanRows = r.Int64("SQLENGINE_MAX_SCAN_ROWS", 0, 0, 1<<62)
	c.Impersonation = r.Bool("SQLENGINE_ENABLE_IMPERSONATION", false)
	c.ImpersonationField = r.Enum("SQLENGINE_IMPERSONATION_FIELD", FieldUsername, FieldUsername, FieldEmail, FieldSubject)
	scope, err := sqlguard.ParseScope(r.List("SQLENGINE_ALLOWED_SCHEMAS", nil))
	if err != nil {
		r.Fail("SQLENGINE_ALLOWED_SCHEMAS", r.Lookup("SQLENGINE_ALLOWED_SCHEMAS"), "comma-separated catalog.schema names ("+err.Error()+")")
		scope = &sqlguard.Scope{}
	}
	c.AllowedSchemas = scope

	conn, perr := profile.Resolve(getenv, profile.Flags{})
	var envErr *profile.EnvError
	if perr != nil && !errors.As(perr, &envErr) { // env problems are already recorded
		if r.Err() != nil {
			r.Report(perr)
			return c, nil
		}
		return c, perr
	}
	c.Profile, c.ProfileFrom, c.ConfigPath = conn.Profile, conn.ProfileFrom, conn.ConfigPath
	c.Engine = engine.Config{
		Host: conn.Host, Port: conn.Port, User: conn.User, Password: conn.Password,
		Catalog: conn.Catalog, Schema: conn.Schema,
		SSL: conn.SSL, SSLInsecure: conn.Insecure, Scheme: scheme,
		Source: source, MaxRows: c.MaxRows, MaxResultBytes: maxBytes, QueryTimeout: timeout,
		QueryMaxMemory: maxMemory,
		// Defence in depth for a read-only server: the engine refuses writes too.
		ReadOnlyTransactions: !c.AllowWrites,
	}
	switch {
	case scheme == "http" && r.Lookup("SQLENGINE_SSL") != "" && envSSL:
		r.Fail("SQLENGINE_SCHEME", scheme, "https, or unset, when SQLENGINE_SSL=true")
	case conn.Password != "" && !strings.HasPrefix(c.Engine.URL(), "https:"):
		r.FailSecret("SQLENGINE_PASSWORD", conn.Password, "a password only with TLS: set SQLENGINE_SSL=true (or ssl.enabled in the profile)")
	}
	if conn.Schema != "" && conn.Catalog == "" {
		r.Fail("SQLENGINE_SCHEMA", conn.Schema, "a schema only together with SQLENGINE_CATALOG")
	}
	if oauth, _ := envconfig.ParseBool(r.Lookup("OAUTH_ENABLED")); c.Impersonation && !oauth {
		r.Fail("SQLENGINE_ENABLE_IMPERSONATION", "true", "true only with OAUTH_ENABLED=true on the HTTP transport (the caller comes from the token)")
	}
	return c, nil
}
