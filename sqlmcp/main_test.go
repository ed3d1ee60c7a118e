package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

var _ = flag.Bool("update", false, "rewrite golden files")

// trino is the Trino-protocol test engine every end-to-end test talks to.
var trino *trinotest.Server

func TestMain(m *testing.M) {
	flag.Parse()
	s, err := trinotest.New(trinotest.Options{LargeTableRows: 20000, PageSize: 500})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the test engine:", err)
		os.Exit(1)
	}
	trino = s
	code := m.Run()
	s.Close()
	os.Exit(code)
}

const jwtSecret = "0123456789abcdef0123456789abcdef-e2e"

// engineEnv points the server at the test engine, with an empty profile
// directory so a developer's own profiles never leak in.
func engineEnv(t *testing.T, extra ...string) []string {
	env := []string{
		"XDG_CONFIG_HOME=" + t.TempDir(),
		"SQLENGINE_HOST=" + trino.Host(),
		"SQLENGINE_PORT=" + strconv.Itoa(trino.Port()),
		"SQLENGINE_USER=svc",
		"SQLENGINE_CATALOG=" + trinotest.DefaultCatalog,
		"SQLENGINE_SCHEMA=" + trinotest.DefaultSchema,
		"LOG_LEVEL=debug",
	}
	return append(env, extra...)
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", e2e.Text(res))
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(e2e.Text(res)), &fromText); err != nil {
		t.Fatalf("text is not JSON: %v: %s", err, e2e.Text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var sc map[string]any
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sc) != fmt.Sprint(fromText) {
		t.Errorf("structuredContent %v differs from the text %v", sc, fromText)
	}
	return sc
}

func TestSurfaceOverStdioAndHTTP(t *testing.T) {
	bin := e2e.Build(t, ".")
	stdio := e2e.Stdio(t, bin, engineEnv(t))
	e2e.Golden(t, "testdata/surface.golden.json", e2e.List(t, stdio))
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	for _, v := range []string{e2e.Legacy, e2e.Modern} {
		cs := e2e.Connect(t, srv.MCPURL(), nil, e2e.Protocol(v))
		e2e.Golden(t, "testdata/surface.golden.json", e2e.List(t, cs))
	}
	sse := e2e.ConnectSSE(t, srv.SSEURL())
	e2e.Golden(t, "testdata/surface.golden.json", e2e.List(t, sse))
	m := structured(t, e2e.CallTool(t, sse, "execute_query", map[string]any{"query": "VALUES 1, 2"}))
	if fmt.Sprint(m["rows"]) != "[[1] [2]]" {
		t.Errorf("execute_query over SSE = %v", m)
	}
	writes := e2e.Stdio(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true"))
	// With writes allowed execute_query goes through the approval pipeline:
	// its description names the risk class and its schema takes dryRun and
	// confirm.
	e2e.Golden(t, "testdata/surface_writes.golden.json", e2e.List(t, writes))
	for _, tool := range e2e.List(t, writes).Tools {
		if tool.Name == "execute_query" && (tool.Annotations.ReadOnlyHint || tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
			t.Errorf("with writes allowed execute_query is annotated %+v", tool.Annotations)
		}
	}
	// With a read budget execute_query may need approval even with writes
	// off: it is declared a change tool (dryRun, confirm), not destructive.
	budget := e2e.Stdio(t, bin, engineEnv(t, "SQLENGINE_MAX_SCAN_ROWS=5000"))
	e2e.Golden(t, "testdata/surface_budget.golden.json", e2e.List(t, budget))
	for _, tool := range e2e.List(t, budget).Tools {
		if tool.Name == "execute_query" && (tool.Annotations.ReadOnlyHint || tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint) {
			t.Errorf("with a budget execute_query is annotated %+v", tool.Annotations)
		}
	}
}

func TestToolsOverStdioAndHTTP(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t))
	for name, cs := range map[string]*mcp.ClientSession{
		"stdio": e2e.Stdio(t, bin, engineEnv(t)),
		"http":  e2e.Connect(t, srv.MCPURL(), nil),
	} {
		t.Run(name, func(t *testing.T) {
			m := structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT id FROM " + trinotest.LargeTable + " ORDER BY id", "limit": 3}))
			if fmt.Sprint(m["rows"]) != "[[1] [2] [3]]" || m["truncated"] != true || m["limit"] != float64(3) {
				t.Errorf("execute_query = %v", m)
			}
			m = structured(t, e2e.CallTool(t, cs, "list_catalogs", nil))
			if !strings.Contains(fmt.Sprint(m["catalogs"]), "warehouse") {
				t.Errorf("list_catalogs = %v", m)
			}
			m = structured(t, e2e.CallTool(t, cs, "list_schemas", map[string]any{"catalog": "warehouse"}))
			if !strings.Contains(fmt.Sprint(m["schemas"]), "logs") {
				t.Errorf("list_schemas = %v", m)
			}
			m = structured(t, e2e.CallTool(t, cs, "list_tables", map[string]any{"catalog": "warehouse", "schema": "logs", "pattern": "ev%"}))
			if fmt.Sprint(m["tables"]) != "[map[name:events type:TABLE]]" {
				t.Errorf("list_tables = %v", m)
			}
			m = structured(t, e2e.CallTool(t, cs, "get_table_schema", map[string]any{"table": trinotest.LargeTable}))
			if m["table"] != "events" || len(m["columns"].([]any)) == 0 {
				t.Errorf("get_table_schema = %v", m)
			}
			m = structured(t, e2e.CallTool(t, cs, "explain_query", map[string]any{"query": "SELECT 1", "type": "VALIDATE"}))
			if m["plan"] != "true" {
				t.Errorf("explain_query = %v", m)
			}
			res := e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "DELETE FROM " + trinotest.LargeTable})
			if !res.IsError || !strings.Contains(e2e.Text(res), "SQLENGINE_ALLOW_WRITE_QUERIES") {
				t.Errorf("a write was not refused: %s", e2e.Text(res))
			}
		})
	}
}

// TestHTTPRefusesUnauthenticated: with OAuth on, /mcp answers 401 without a token.
func TestHTTPRefusesUnauthenticated(t *testing.T) {
	bin := e2e.Build(t, ".")
	srv := e2e.StartHTTP(t, bin, engineEnv(t, e2e.OAuthEnv...))
	e2e.RequireUnauthorized(t, srv.MCPURL(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func token(claims map[string]any) string {
	c := map[string]any{"aud": "x", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for k, v := range claims {
		c[k] = v
	}
	return idptest.SignHS256(jwtSecret, c)
}

// TestOAuthIdentityReachesTheEngine: over HTTP with OAuth (hmac tokens), the
// engine receives the caller in its attribution headers and, with
// impersonation, as X-Trino-User.
func TestOAuthIdentityReachesTheEngine(t *testing.T) {
	bin := e2e.Build(t, ".")
	oauth := []string{"OAUTH_ENABLED=true", "OAUTH_PROVIDER=hmac", "JWT_SECRET=" + jwtSecret, "OIDC_AUDIENCE=x"}
	alice := &http.Client{Transport: bearer{token(map[string]any{"sub": "u-1", "preferred_username": "alice", "email": "alice@example.com"}), http.DefaultTransport}}
	nameless := &http.Client{Transport: bearer{token(map[string]any{"sub": "u-2"}), http.DefaultTransport}}

	srv := e2e.StartHTTP(t, bin, engineEnv(t, oauth...))
	cs := e2e.Connect(t, srv.MCPURL(), alice)
	structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT 'e2e-attribution'"}))
	qi := trino.LastQuery(t, "SELECT 'e2e-attribution'")
	if qi.User != "svc" || strings.Join(qi.ClientTags, ",") != "sqlmcp,user:alice" || !strings.Contains(qi.ClientInfo, `"email":"alice@example.com"`) {
		t.Errorf("attribution: user=%q tags=%q info=%q", qi.User, qi.ClientTags, qi.ClientInfo)
	}

	srv = e2e.StartHTTP(t, bin, engineEnv(t, append(oauth, "SQLENGINE_ENABLE_IMPERSONATION=true", "SQLENGINE_IMPERSONATION_FIELD=email")...))
	cs = e2e.Connect(t, srv.MCPURL(), alice)
	structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT 'e2e-impersonation'"}))
	if qi := trino.LastQuery(t, "SELECT 'e2e-impersonation'"); qi.User != "alice@example.com" {
		t.Errorf("impersonation: X-Trino-User = %q", qi.User)
	}
	// A caller without the claim is refused at the door (401), before any
	// MCP message: it can neither list nor call tools.
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_query","arguments":{"query":"SELECT 'e2e-nameless'"}}}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.MCPURL(), strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := nameless.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, "email") {
			t.Errorf("a caller without the claim: HTTP %d, challenge %q", resp.StatusCode, ch)
		}
	}
	for _, q := range trino.Queries() {
		if q.SQL == "SELECT 'e2e-nameless'" {
			t.Errorf("the nameless caller's query ran as %q", q.User)
		}
	}
}

func runBinary(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatal(err)
	return "", -1
}

func TestConfigurationErrorsExit2(t *testing.T) {
	bin := e2e.Build(t, ".")
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{[]string{"SQLENGINE_PORT=eighty"}, []string{"SQLENGINE_PORT"}},
		{[]string{"SQLENGINE_MAX_ROWS=0", "SQLENGINE_QUERY_TIMEOUT=soon"}, []string{"SQLENGINE_MAX_ROWS", "SQLENGINE_QUERY_TIMEOUT"}},
		{[]string{"SQLENGINE_MAX_ROWS=20000"}, []string{"SQLENGINE_MAX_ROWS_CEILING"}},
		{[]string{"SQLENGINE_SSL=maybe", "SQLENGINE_SCHEME=ftp"}, []string{"SQLENGINE_SSL", "SQLENGINE_SCHEME"}},
		{[]string{"SQLENGINE_ALLOWED_SCHEMAS=sales"}, []string{"SQLENGINE_ALLOWED_SCHEMAS", "catalog.schema"}},
		{[]string{"SQLENGINE_IMPERSONATION_FIELD=name"}, []string{"SQLENGINE_IMPERSONATION_FIELD"}},
		{[]string{"SQLENGINE_ENABLE_IMPERSONATION=true"}, []string{"OAUTH_ENABLED"}},
		{[]string{"SQLENGINE_PASSWORD=hunter2"}, []string{"SQLENGINE_PASSWORD", "SQLENGINE_SSL=true"}},
		{[]string{"SQLENGINE_PROFILE=nope"}, []string{"nope", "no such profile"}},
		// SQLENGINE_AUTH and its variables, every problem at once.
		{[]string{"SQLENGINE_AUTH=kerberos"}, []string{"SQLENGINE_AUTH", "token-exchange"}},
		{[]string{"SQLENGINE_AUTH=token-exchange"}, []string{"OAUTH_ENABLED", "SQLENGINE_SSL=true", "SQLENGINE_TOKEN_EXCHANGE_URL", "SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID",
			"SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET", "SQLENGINE_TOKEN_EXCHANGE_AUDIENCE"}},
		{[]string{"SQLENGINE_AUTH=token-exchange", "SQLENGINE_SSL=true", "OAUTH_ENABLED=true", "OAUTH_PROVIDER=hmac", "JWT_SECRET=" + jwtSecret,
			"SQLENGINE_ENABLE_IMPERSONATION=true", "SQLENGINE_TOKEN_EXCHANGE_URL=http://idp.example.com/token",
			"SQLENGINE_TOKEN_EXCHANGE_CLIENT_ID=c", "SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET=hunter2", "SQLENGINE_TOKEN_EXCHANGE_AUDIENCE=trino"},
			[]string{"hmac tokens cannot be exchanged", "impersonation is for password and jwt", "SQLENGINE_TOKEN_EXCHANGE_URL", "loopback"}},
		{[]string{"SQLENGINE_AUTH=external", "SQLENGINE_SSL=true"}, []string{"SQL shell"}},
		{[]string{"SQLENGINE_AUTH=jwt", "SQLENGINE_SSL=true", "SQLENGINE_PASSWORD=hunter2"}, []string{"SQLENGINE_PASSWORD", "SQLENGINE_JWT"}},
		{[]string{"SQLENGINE_JWT=hunter2"}, []string{"SQLENGINE_JWT", "only with SQLENGINE_AUTH=jwt"}},
		{[]string{"SQLENGINE_TOKEN_EXCHANGE_CLIENT_SECRET=hunter2"}, []string{"only with SQLENGINE_AUTH=token-exchange"}},
		// SQLENGINE_CLUSTERS: names and per-cluster variables.
		{[]string{"SQLENGINE_CLUSTERS=prod,PROD"}, []string{"SQLENGINE_CLUSTERS", "distinct"}},
		{[]string{"SQLENGINE_CLUSTERS=prod,../dev"}, []string{"SQLENGINE_CLUSTERS", "../dev"}},
		{[]string{"SQLENGINE_CLUSTERS=prod,dev", "SQLENGINE_DEV_PORT=eighty"}, []string{"cluster dev", "SQLENGINE_DEV_PORT"}},
		{[]string{"SQLENGINE_CLUSTERS=prod,dev", "SQLENGINE_PROD_ALLOWED_SCHEMAS=sales"}, []string{"cluster prod", "SQLENGINE_PROD_ALLOWED_SCHEMAS"}},
		{[]string{"SQLENGINE_CLUSTERS=prod,dev", "SQLENGINE_DEV_AUTH=jwt", "SQLENGINE_DEV_PASSWORD=hunter2", "SQLENGINE_DEV_SSL=true"}, []string{"cluster dev", "SQLENGINE_DEV_PASSWORD"}},
	} {
		out, code := runBinary(t, bin, append([]string{"XDG_CONFIG_HOME=" + t.TempDir()}, tc.env...), "serve")
		if code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", tc.env, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output does not name %q:\n%s", tc.env, w, out)
			}
		}
		if strings.Contains(out, "hunter2") {
			t.Errorf("the password was echoed: %s", out)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	bin := e2e.Build(t, ".")
	out, code := runBinary(t, bin, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "sqlmcp ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version: exit %d: %q", code, out)
	}
	out, code = runBinary(t, bin, nil, "serve", "--help")
	if code != 0 || !strings.Contains(out, "SQLENGINE_ALLOWED_SCHEMAS") || !strings.Contains(out, "MCP_TRANSPORT") {
		t.Errorf("serve --help: exit %d:\n%s", code, out)
	}
}

// TestEngineDownAtStartup: the server starts anyway and calls fail clearly.
func TestEngineDownAtStartup(t *testing.T) {
	bin := e2e.Build(t, ".")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	env := engineEnv(t, "SQLENGINE_PORT="+strconv.Itoa(port))
	cs := e2e.Stdio(t, bin, env)
	start := time.Now()
	res := e2e.CallTool(t, cs, "list_catalogs", nil)
	if !res.IsError || !strings.Contains(e2e.Text(res), "SQLENGINE_HOST") {
		t.Errorf("list_catalogs against a down engine: %s", e2e.Text(res))
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the call took %v", d)
	}
}

// TestProfileFileSuppliesTheConnection: with no SQLENGINE_HOST/PORT, the
// profile file's current profile points the server at the engine.
func TestProfileFileSuppliesTheConnection(t *testing.T) {
	bin := e2e.Build(t, ".")
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{"current":"test","profiles":{"test":{"host":%q,"port":%d,"user":"profiled","catalog":"warehouse","schema":"logs"}}}`, trino.Host(), trino.Port())
	if err := os.MkdirAll(filepath.Join(dir, "sqlengine"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sqlengine", "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := e2e.Stdio(t, bin, []string{"XDG_CONFIG_HOME=" + dir})
	m := structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT count(*) AS n FROM events WHERE id <= 10"}))
	if fmt.Sprint(m["rows"]) != "[[10]]" {
		t.Errorf("rows = %v", m["rows"])
	}
	if qi := trino.LastQuery(t, "SELECT count(*) AS n FROM events WHERE id <= 10"); qi.User != "profiled" || qi.Catalog != "warehouse" {
		t.Errorf("engine saw user=%q catalog=%q", qi.User, qi.Catalog)
	}
}

// TestModeSelection: no arguments with stdin not a terminal serves MCP
// (covered by every Stdio test); an unknown subcommand goes to the CLI.
func TestModeSelection(t *testing.T) {
	bin := e2e.Build(t, ".")
	out, code := runBinary(t, bin, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "no-such-command")
	if code != 2 {
		t.Errorf("unknown command: exit %d, want 2 (CLI usage error)\n%s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--mcp")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, engineEnv(t)...)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	out2, err := cmd.Output()
	if err != nil || !strings.Contains(string(out2), `"serverInfo"`) {
		t.Errorf("--mcp: %v: %s", err, out2)
	}
}

// slowQuery takes a minute on the test engine unless cancelled.
func slowQuery(tag string) string {
	return "SELECT pause_ms(60000) AS " + tag
}

func waitEngineCancel(t *testing.T, sqlText string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, q := range trino.Queries() {
			if q.SQL == sqlText && q.Cancelled {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the engine saw no cancel of %q", sqlText)
}

// TestCancelledRequestCancelsOnEngine: a client that gives up on a call
// (notifications/cancelled) stops the query on the engine.
func TestCancelledRequestCancelsOnEngine(t *testing.T) {
	bin := e2e.Build(t, ".")
	cs := e2e.Stdio(t, bin, engineEnv(t))
	q := slowQuery("cancelled_by_client")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_query", Arguments: map[string]any{"query": q}}); err == nil {
		t.Fatal("the slow query returned")
	}
	waitEngineCancel(t, q)
}

// TestQueryTimeoutCancelsOnEngine: SQLENGINE_QUERY_TIMEOUT ends the query on
// the engine and the tool error says which setting to raise.
func TestQueryTimeoutCancelsOnEngine(t *testing.T) {
	bin := e2e.Build(t, ".")
	cs := e2e.Stdio(t, bin, engineEnv(t, "SQLENGINE_QUERY_TIMEOUT=1s"))
	q := slowQuery("timed_out")
	res := e2e.CallTool(t, cs, "execute_query", map[string]any{"query": q})
	if !res.IsError || !strings.Contains(e2e.Text(res), "SQLENGINE_QUERY_TIMEOUT") {
		t.Errorf("timeout result: %s", e2e.Text(res))
	}
	waitEngineCancel(t, q)
}

// TestReadyzFollowsTheEngine: GET /readyz is 200 while the engine answers
// and 503 naming the engine when it does not.
func TestReadyzFollowsTheEngine(t *testing.T) {
	bin := e2e.Build(t, ".")
	readyz := func(srv *e2e.HTTPServer) (int, string) {
		resp, err := http.Get(srv.Base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := readyz(e2e.StartHTTP(t, bin, engineEnv(t))); code != http.StatusOK {
		t.Errorf("engine up: HTTP %d %s", code, body)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if code, body := readyz(e2e.StartHTTP(t, bin, engineEnv(t, "SQLENGINE_PORT="+strconv.Itoa(port)))); code != http.StatusServiceUnavailable || !strings.Contains(body, "Trino") {
		t.Errorf("engine down: HTTP %d %s", code, body)
	}
}

// TestApprovalOverStdio: the built server with writes allowed, driven over
// stdio by the go-sdk client (no elicitation): a DELETE returns the preview
// and a code, the code runs it, and MCP_AUDIT_LOG holds the records (stdout
// stays the transport's: the session keeps working).
func TestApprovalOverStdio(t *testing.T) {
	ctx := t.Context()
	for _, s := range []string{"CREATE SCHEMA sales.e2eappr", "CREATE TABLE sales.e2eappr.orders (id INTEGER, status VARCHAR)",
		"INSERT INTO sales.e2eappr.orders VALUES (1, 'open'), (2, 'void'), (3, 'void')"} {
		if err := trino.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales.e2eappr CASCADE") })
	bin := e2e.Build(t, ".")
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	cs := e2e.Stdio(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "SQLENGINE_SCHEMA=e2eappr", "MCP_AUDIT_LOG="+auditLog))
	del := map[string]any{"query": "DELETE FROM orders WHERE status = 'void'"}
	first := e2e.CallTool(t, cs, "execute_query", del)
	text := e2e.Text(first)
	if first.IsError || !strings.Contains(text, "Approval needed — nothing was changed yet.") ||
		!strings.Contains(text, "Delete rows from sales.e2eappr.orders (3 rows now) where status = 'void' on Trino at "+trino.URL()+" as user svc.") {
		t.Fatalf("first call: %s", text)
	}
	i := strings.Index(text, `confirm: "`) + len(`confirm: "`)
	code := text[i : i+strings.Index(text[i:], `"`)]
	if d, _ := trino.Dump(ctx, "sales", "e2eappr"); !strings.Contains(d, "void") {
		t.Fatal("the preview changed the table")
	}
	res := e2e.CallTool(t, cs, "execute_query", map[string]any{"query": del["query"], "confirm": code})
	if res.IsError {
		t.Fatalf("confirmed: %s", e2e.Text(res))
	}
	if d, _ := trino.Dump(ctx, "sales", "e2eappr"); strings.Contains(d, "void") {
		t.Errorf("the approved DELETE did not run:\n%s", d)
	}
	raw, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var got []string
	for _, l := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		got = append(got, fmt.Sprint(r["event"], ":", r["approval"]))
	}
	if strings.Join(got, " ") != "outcome:pending intent:confirmation_code outcome:confirmation_code" {
		t.Errorf("audit records %v", got)
	}
	if p := os.Getenv("SQLMCP_EXCERPTS"); p != "" {
		os.WriteFile(p, []byte(text+"\n\n"+string(raw)), 0o600)
	}
	if m := structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT count(*) FROM orders"})); fmt.Sprint(m["rows"]) != "[[1]]" {
		t.Errorf("after the DELETE: %v", m["rows"])
	}
}

// TestUnwritableAuditLogStopsStart: a server whose audit log cannot be
// opened does not start: no change without its record.
func TestUnwritableAuditLogStopsStart(t *testing.T) {
	bin := e2e.Build(t, ".")
	path := filepath.Join(t.TempDir(), "missing-dir", "audit.log")
	out, code := runBinary(t, bin, engineEnv(t, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "MCP_AUDIT_LOG="+path), "serve")
	if code == 0 || !strings.Contains(out, path) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// engineMark is a point in an engine's recorded requests.
type engineMark struct {
	s *trinotest.Server
	n int
}

func markEngines(engines ...*trinotest.Server) []engineMark {
	marks := make([]engineMark, len(engines))
	for i, s := range engines {
		marks[i] = engineMark{s, s.RequestCount()}
	}
	return marks
}

// waitTransactionsEnded waits until every read-only transaction started
// since the marks has ended and its ROLLBACK has been answered:
// execute_query sends the ROLLBACK after its answer, so a count of the
// engines' requests taken right after a call could otherwise move by itself.
func waitTransactionsEnded(t *testing.T, marks []engineMark) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, m := range marks {
		for {
			starts, ends := trinotest.TransactionEnds(m.s.RequestsSince(m.n))
			if starts == ends {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("transactions still open on the engine after 30 s: %d started, %d ended", starts, ends)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
