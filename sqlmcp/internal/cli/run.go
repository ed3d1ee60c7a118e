package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/profile"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
)

// session is the connection a command or the shell works with.
type session struct {
	client      *engine.Client
	conn        profile.Connection
	catalog     string // defaults for unqualified names; the shell's USE changes them
	schema      string
	allowWrites bool
	scope       *sqlguard.Scope // SQLENGINE_ALLOWED_SCHEMAS, enforced as in server mode
}

// connect resolves the connection (flags, profiles, environment) and opens
// an engine client. It does not contact the engine.
func (a *app) connect() (*session, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	conn, err := profile.ResolveWith(cfg, a.getenv, a.opts.conn)
	if err != nil {
		return nil, err
	}
	env := envconfig.New(a.getenv)
	timeout := env.Duration("SQLENGINE_QUERY_TIMEOUT", engine.DefaultQueryTimeout, time.Second)
	maxMemory := env.String("SQLENGINE_QUERY_MAX_MEMORY", engine.DefaultQueryMaxMemory)
	if _, err := engine.ParseDataSize(maxMemory); err != nil {
		env.Fail("SQLENGINE_QUERY_MAX_MEMORY", maxMemory, "a data size of at least 1MB such as 512MB or 2GB")
	}
	allowWrites := env.Bool("SQLENGINE_ALLOW_WRITE_QUERIES", false)
	source := env.String("SQLENGINE_SOURCE", engine.DefaultSource)
	scope, serr := sqlguard.ParseScope(env.List("SQLENGINE_ALLOWED_SCHEMAS", nil))
	if serr != nil {
		env.Fail("SQLENGINE_ALLOWED_SCHEMAS", env.Lookup("SQLENGINE_ALLOWED_SCHEMAS"), "comma-separated catalog.schema names ("+serr.Error()+")")
	}
	if err := env.Err(); err != nil {
		return nil, err
	}
	if err := reachable(a.ctx, conn); err != nil {
		return nil, err
	}
	ecfg := engine.Config{
		Host: conn.Host, Port: conn.Port, User: conn.User, Password: conn.Password,
		Catalog: conn.Catalog, Schema: conn.Schema,
		SSL: conn.SSL, SSLInsecure: conn.Insecure,
		Source:         source,
		QueryTimeout:   timeout,
		QueryMaxMemory: maxMemory,
	}
	if err := a.auth(&ecfg, conn); err != nil {
		return nil, err
	}
	client, err := engine.New(ecfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s:%d: %w", conn.Host, conn.Port, err)
	}
	return &session{client: client, conn: conn, catalog: conn.Catalog, schema: conn.Schema, allowWrites: allowWrites, scope: scope}, nil
}

// openBrowser opens u in the user's browser when the system has a
// launcher; the printed URL remains when it does not. Tests replace it with
// a headless step.
var openBrowser = func(ctx context.Context, u *url.URL) error {
	name := map[string]string{"darwin": "open", "windows": "rundll32"}[runtime.GOOS]
	args := []string{u.String()}
	switch runtime.GOOS {
	case "darwin":
	case "windows":
		args = []string{"url.dll,FileProtocolHandler", u.String()}
	default:
		name = "xdg-open"
	}
	if _, err := exec.LookPath(name); err != nil {
		return err
	}
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// auth sets how the shell authenticates to Trino from the profile's auth
// (or SQLENGINE_AUTH): password, jwt (jwt_file, or SQLENGINE_JWT) or
// external (Trino's browser login, the token kept per profile, mode 0600,
// under the user's configuration directory).
func (a *app) auth(cfg *engine.Config, conn profile.Connection) error {
	mode, err := trinoauth.ParseMode(conn.Auth)
	if err != nil {
		return fmt.Errorf("auth %q: %w", conn.Auth, err)
	}
	switch mode {
	case trinoauth.ModeJWT:
		src, err := trinoauth.LoadJWT(a.getenv("SQLENGINE_JWT"), conn.JWTFile)
		if err != nil {
			return fmt.Errorf("auth jwt: %w", err)
		}
		cfg.Token = src
	case trinoauth.ModeExternal:
		dir := ""
		if x := a.getenv("XDG_CONFIG_HOME"); x != "" {
			dir = filepath.Join(x, "sqlmcp", "tokens")
		}
		name := cmp.Or(conn.Profile, "default")
		cache, err := trinoauth.NewFileTokenCache(dir, name)
		if err != nil {
			return fmt.Errorf("auth external: %w", err)
		}
		cfg.External = &engine.External{Redirect: trinoauth.PrintRedirect(a.stderr, openBrowser), Cache: cache}
	case trinoauth.ModeTokenExchange:
		return errors.New("auth token-exchange is for the MCP server (each caller's OAuth token); in the shell use password, jwt or external")
	}
	return nil
}

// reachable checks that the coordinator's port accepts connections, so an
// engine that is down fails at once with a clear message instead of after
// the Trino client's retries.
func reachable(ctx context.Context, conn profile.Connection) error {
	addr := net.JoinHostPort(conn.Host, strconv.Itoa(conn.Port))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return fmt.Errorf("connect to the Trino coordinator at %s: %v; check the host and port (--host/--port, the profile, SQLENGINE_HOST/SQLENGINE_PORT) and that the engine is running", addr, err)
	}
	c.Close()
	return nil
}

func (s *session) close() { s.client.Close() }

// query runs one statement through the safety rules and streams its result
// to a printer of format. Rows are printed as they arrive.
func (a *app) query(ctx context.Context, s *session, sqlText, format string, w io.Writer, timing bool) error {
	st, err := sqlguard.Check(sqlText, sqlguard.Options{AllowWrites: s.allowWrites})
	if err != nil {
		return err
	}
	if err := s.client.CheckScope(ctx, s.scope, st, engine.Query{SQL: st.SQL, Catalog: s.catalog, Schema: s.schema}); err != nil {
		return err
	}
	p := newPrinter(format, w, timing)
	if st.Explain && format == "table" {
		// A plan is multi-line text: print it as it is, not in a cell.
		p = &planPrinter{w: w}
	}
	started := false
	sum, err := s.client.Stream(ctx, engine.Query{SQL: st.SQL, Limit: a.opts.limit, Catalog: s.catalog, Schema: s.schema},
		func(cols []engine.Column) error {
			started = true
			return p.Columns(toColumns(cols))
		},
		func(row []any) error { return p.Row(row) })
	if err != nil {
		if started {
			p.Abort()
		}
		return err
	}
	if !started {
		p.Columns(nil)
	}
	return p.End(toSummary(sum))
}

func toColumns(cols []engine.Column) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Type: c.Type}
	}
	return out
}

func toSummary(s engine.Summary) Summary {
	return Summary{RowCount: s.RowCount, Truncated: s.Truncated, Limit: s.Limit, QueryID: s.QueryID, ElapsedMS: s.ElapsedMS, UpdateCount: s.UpdateCount}
}

// printRows prints a small, complete result (metadata listings).
func printRows(format string, w io.Writer, cols []Column, rows [][]any, elapsed time.Duration) error {
	p := newPrinter(format, w, false)
	if err := p.Columns(cols); err != nil {
		return err
	}
	for _, r := range rows {
		if err := p.Row(r); err != nil {
			return err
		}
	}
	return p.End(Summary{RowCount: len(rows), ElapsedMS: elapsed.Milliseconds()})
}

// readSQL returns the SQL of the query command: the arguments joined, or
// standard input for "-", or the file of -f.
func (a *app) readSQL(args []string) (string, error) {
	switch {
	case a.opts.file != "" && len(args) > 0:
		return "", usagef("query", "give the SQL either as arguments or with -f, not both")
	case a.opts.file == "-" || (len(args) == 1 && args[0] == "-"):
		b, err := io.ReadAll(a.stdin)
		if err != nil {
			return "", fmt.Errorf("read SQL from standard input: %w", err)
		}
		return string(b), nil
	case a.opts.file != "":
		b, err := os.ReadFile(a.opts.file)
		if err != nil {
			return "", fmt.Errorf("read SQL from %s: %w; check the path", a.opts.file, errors.Unwrap(err))
		}
		return string(b), nil
	case len(args) == 0:
		return "", usagef("query", "query needs SQL: sqlmcp query 'SELECT ...', sqlmcp query - (standard input) or sqlmcp query -f FILE")
	}
	return strings.Join(args, " "), nil
}

func runQuery(a *app, args []string) error {
	text, err := a.readSQL(args)
	if err != nil {
		return err
	}
	stmts := scriptStatements(text)
	if len(stmts) == 0 {
		return usagef("query", "the SQL given is empty")
	}
	s, err := a.connect()
	if err != nil {
		return err
	}
	defer s.close()
	format := a.format()
	for i, stmt := range stmts {
		if i > 0 && format == "table" {
			fmt.Fprintln(a.stdout)
		}
		if err := a.query(a.ctx, s, stmt, format, a.stdout, false); err != nil {
			if len(stmts) > 1 {
				return fmt.Errorf("statement %d of %d: %w", i+1, len(stmts), err)
			}
			return err
		}
	}
	return nil
}

func runCatalogs(a *app, _ []string) error {
	s, err := a.connect()
	if err != nil {
		return err
	}
	defer s.close()
	start := time.Now()
	cats, err := s.client.Catalogs(a.ctx)
	if err != nil {
		return err
	}
	if s.scope.Enabled() {
		cats = slices.DeleteFunc(cats, func(c string) bool { return !s.scope.AllowsCatalog(c) })
	}
	return printRows(a.format(), a.stdout, []Column{{"catalog", "varchar"}}, stringRows(cats), time.Since(start))
}

func stringRows(items []string) [][]any {
	rows := make([][]any, len(items))
	for i, v := range items {
		rows[i] = []any{v}
	}
	return rows
}

func runSchemas(a *app, args []string) error {
	s, err := a.connect()
	if err != nil {
		return err
	}
	defer s.close()
	return a.listSchemas(a.ctx, s, firstArg(args), a.format(), a.stdout)
}

func (a *app) listSchemas(ctx context.Context, s *session, catalog, format string, w io.Writer) error {
	if catalog == "" {
		catalog = s.catalog
	}
	if catalog == "" {
		return usagef("schemas", "schemas needs a catalog: sqlmcp schemas <catalog> (or set a default catalog)")
	}
	start := time.Now()
	schemas, err := s.client.Schemas(ctx, catalog)
	if err != nil {
		return err
	}
	if s.scope.Enabled() {
		schemas = slices.DeleteFunc(schemas, func(sc string) bool { return !s.scope.AllowsSchema(catalog, sc) })
	}
	return printRows(format, w, []Column{{"schema", "varchar"}}, stringRows(schemas), time.Since(start))
}

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

func runTables(a *app, args []string) error {
	if len(args) == 1 {
		return usagef("tables", "tables needs a catalog and a schema: sqlmcp tables <catalog> <schema>")
	}
	s, err := a.connect()
	if err != nil {
		return err
	}
	defer s.close()
	var catalog, schema string
	if len(args) == 2 {
		catalog, schema = args[0], args[1]
	}
	return a.listTables(a.ctx, s, catalog, schema, a.format(), a.stdout)
}

func (a *app) listTables(ctx context.Context, s *session, catalog, schema, format string, w io.Writer) error {
	if catalog == "" {
		catalog, schema = s.catalog, s.schema
	}
	if catalog == "" || schema == "" {
		return usagef("tables", "tables needs a catalog and a schema: sqlmcp tables <catalog> <schema> (or set default ones)")
	}
	if err := s.scope.CheckSchema(catalog, schema); err != nil {
		return err
	}
	start := time.Now()
	tables, err := s.client.Tables(ctx, catalog, schema, "")
	if err != nil {
		return err
	}
	rows := make([][]any, len(tables))
	for i, t := range tables {
		var typ any = t.Type
		if t.Type == "" {
			typ = nil
		}
		rows[i] = []any{t.Name, typ}
	}
	return printRows(format, w, []Column{{"name", "varchar"}, {"type", "varchar"}}, rows, time.Since(start))
}

func runDescribe(a *app, args []string) error {
	s, err := a.connect()
	if err != nil {
		return err
	}
	defer s.close()
	switch len(args) {
	case 1:
		return a.describe(a.ctx, s, args[0], a.format(), a.stdout)
	case 3:
		return a.describeTable(a.ctx, s, args[0], args[1], args[2], a.format(), a.stdout)
	}
	return usagef("describe", "describe takes a table name, or the catalog, schema and table as three arguments")
}

// describe prints the columns of name (table, schema.table or
// catalog.schema.table, resolved against the session's defaults).
func (a *app) describe(ctx context.Context, s *session, name, format string, w io.Writer) error {
	parts, err := engine.SplitName(name)
	if err != nil {
		return usagef("describe", "read table name %q: %v", name, err)
	}
	var catalog, schema, table string
	switch len(parts) {
	case 1:
		catalog, schema, table = s.catalog, s.schema, parts[0]
	case 2:
		catalog, schema, table = s.catalog, parts[0], parts[1]
	case 3:
		catalog, schema, table = parts[0], parts[1], parts[2]
	default:
		return usagef("describe", "table name %q has %d parts; give catalog.schema.table", name, len(parts))
	}
	if catalog == "" || schema == "" {
		return usagef("describe", "table name %q needs a catalog and schema: give catalog.schema.table (or set default ones)", name)
	}
	return a.describeTable(ctx, s, catalog, schema, table, format, w)
}

// describeTable prints the columns of catalog.schema.table, each part one
// name taken as it is.
func (a *app) describeTable(ctx context.Context, s *session, catalog, schema, table, format string, w io.Writer) error {
	for _, p := range [][2]string{{"catalog", catalog}, {"schema", schema}, {"table", table}} {
		if err := engine.CheckName(p[1]); err != nil {
			return usagef("describe", "the %s name %q is not a valid name: %v", p[0], p[1], err)
		}
	}
	if err := s.scope.CheckSchema(catalog, schema); err != nil {
		return err
	}
	start := time.Now()
	info, err := s.client.TableSchema(ctx, catalog, schema, table)
	if err != nil {
		return err
	}
	rows := make([][]any, len(info.Columns))
	for i, c := range info.Columns {
		var nullable any
		if c.Nullable != nil {
			nullable = *c.Nullable
		}
		rows[i] = []any{c.Name, c.Type, nullable, c.Comment, c.Extra}
	}
	cols := []Column{{"name", "varchar"}, {"type", "varchar"}, {"nullable", "boolean"}, {"comment", "varchar"}, {"extra", "varchar"}}
	return printRows(format, w, cols, rows, time.Since(start))
}

func runExplain(a *app, args []string) error {
	stmts := scriptStatements(strings.Join(args, " "))
	if len(stmts) != 1 {
		return usagef("explain", "explain takes exactly one SQL statement")
	}
	s, err := a.connect()
	if err != nil {
		return err
	}
	defer s.close()
	// Plain EXPLAIN executes nothing, but the statement is still checked so
	// that EXPLAIN ANALYZE and multiple statements are judged like the server does.
	st, err := sqlguard.Check("EXPLAIN "+stmts[0], sqlguard.Options{AllowWrites: s.allowWrites})
	if err != nil {
		return err
	}
	if err := s.client.CheckScope(a.ctx, s.scope, st, engine.Query{SQL: st.Inner, Catalog: s.catalog, Schema: s.schema}); err != nil {
		return err
	}
	start := time.Now()
	// st.Inner is the text the scope check planned: explain exactly that.
	plan, err := s.client.Explain(a.ctx, engine.Query{SQL: st.Inner, Catalog: s.catalog, Schema: s.schema}, "", "")
	if err != nil {
		return err
	}
	format := a.format()
	if format == "table" {
		// A plan is multi-line text: print it as it is, not in a cell.
		fmt.Fprintln(a.stdout, strings.TrimRight(plan, "\n"))
		return nil
	}
	return printRows(format, a.stdout, []Column{{"plan", "varchar"}}, [][]any{{plan}}, time.Since(start))
}

// planPrinter prints the first column of each row as raw text (EXPLAIN
// output in the table format).
type planPrinter struct{ w io.Writer }

func (p *planPrinter) Columns([]Column) error { return nil }
func (p *planPrinter) Row(row []any) error {
	if len(row) == 0 || row[0] == nil {
		return nil
	}
	_, err := fmt.Fprintln(p.w, strings.TrimRight(textValue(row[0]), "\n"))
	return err
}
func (p *planPrinter) End(Summary) error { return nil }
func (p *planPrinter) Abort()            {}
