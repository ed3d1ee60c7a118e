package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestClusters: one sqlmcp over two test engines (SQLENGINE_CLUSTERS):
// prod is the JWT-validating engine reached by token exchange, dev the
// plain one with the service user; each has its own allowed schemas. A
// call without cluster uses prod, the first.
func TestClusters(t *testing.T) {
	bin := e2e.Build(t, ".")
	f := startIdentity(t, bin,
		"SQLENGINE_CLUSTERS=prod,dev",
		"SQLENGINE_PROD_ALLOWED_SCHEMAS=sales.public",
		// dev: its own host, port, scheme and auth; everything else shared.
		"SQLENGINE_DEV_HOST="+trino.Host(), "SQLENGINE_DEV_PORT="+strconv.Itoa(trino.Port()),
		"SQLENGINE_DEV_SSL=false", "SQLENGINE_DEV_AUTH=password",
		"SQLENGINE_DEV_ALLOWED_SCHEMAS=warehouse.logs",
		// The hostile part counts both engines' requests once every
		// transaction ended; none is begun ahead (internal/engine's
		// TestTxAhead* cover that).
		"SQLENGINE_TX_AHEAD=0",
	)
	// The shared token-exchange variables are prod's only: dev sets its
	// own auth, so they are not read for it.
	cs := f.client(t, f.mcpToken("alice"))
	marks := markEngines(f.eng, trino)

	// The surface: every tool takes cluster, an enum of the two.
	tools := e2e.List(t, cs).Tools
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Name == "list_clusters" {
			continue
		}
		if tool.Name == "fetch_more" {
			// A cursor names its own cluster's query: no cluster argument.
			if strings.Contains(string(mustJSON(t, tool.InputSchema)), `"cluster"`) {
				t.Errorf("fetch_more takes a cluster argument; its cursor already names the query")
			}
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		json.Unmarshal(b, &s)
		if got := s.Properties["cluster"].Enum; !slices.Equal(got, []string{"prod", "dev"}) {
			t.Errorf("%s: cluster enum %v, want [prod dev]", tool.Name, got)
		}
	}
	if !slices.Contains(names, "list_clusters") {
		t.Fatalf("no list_clusters in %v", names)
	}
	m := structured(t, e2e.CallTool(t, cs, "list_clusters", nil))
	cl := m["clusters"].([]any)
	if len(cl) != 2 {
		t.Fatalf("list_clusters: %v", m)
	}
	p, d := cl[0].(map[string]any), cl[1].(map[string]any)
	if p["name"] != "prod" || p["default"] != true || p["auth"] != "token-exchange" || !strings.HasPrefix(p["url"].(string), "https://") ||
		d["name"] != "dev" || d["default"] != false || d["auth"] != "password" || d["url"] != trino.URL() {
		t.Errorf("list_clusters: %v", m)
	}
	if got := d["allowed_schemas"].([]any); len(got) != 1 || got[0] != "warehouse.logs" {
		t.Errorf("dev's allowed schemas %v", got)
	}

	// No cluster: prod, as alice (token exchange).
	structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT 'to-prod'"}))
	if qi := f.eng.LastQuery(t, "SELECT 'to-prod'"); qi.Principal != "alice" {
		t.Errorf("prod ran it as %q", qi.Principal)
	}
	// dev: the plain engine, the service user, never a bearer token.
	structured(t, e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT 'to-dev'", "cluster": "dev"}))
	if qi := trino.LastQuery(t, "SELECT 'to-dev'"); qi.User != "svc" {
		t.Errorf("dev ran it as %q", qi.User)
	}
	for _, r := range trino.Requests() {
		if r.Header.Get("Authorization") != "" && strings.Contains(r.Body, "to-dev") {
			t.Errorf("dev got credentials: %s", r.Header.Get("Authorization"))
		}
	}
	for _, q := range f.eng.Queries() {
		if q.SQL == "SELECT 'to-dev'" {
			t.Error("dev's query reached prod")
		}
	}
	// Per-cluster allowed schemas.
	if got := structured(t, e2e.CallTool(t, cs, "list_catalogs", map[string]any{"cluster": "dev"}))["catalogs"]; !slices.Equal(toStrings(got), []string{"warehouse"}) {
		t.Errorf("dev's catalogs %v", got)
	}
	if got := structured(t, e2e.CallTool(t, cs, "list_catalogs", nil))["catalogs"]; !slices.Equal(toStrings(got), []string{"sales"}) {
		t.Errorf("prod's catalogs %v", got)
	}
	res := e2e.CallTool(t, cs, "execute_query", map[string]any{"query": "SELECT count(*) FROM customers", "cluster": "dev"})
	if !res.IsError || !strings.Contains(e2e.Text(res), "SQLENGINE_ALLOWED_SCHEMAS") {
		t.Errorf("dev ran a query outside its allowed schemas: %s", e2e.Text(res))
	}
	structured(t, e2e.CallTool(t, cs, "list_tables", map[string]any{"catalog": "warehouse", "schema": "logs", "cluster": "dev"}))
	res = e2e.CallTool(t, cs, "list_tables", map[string]any{"catalog": "warehouse", "schema": "logs"})
	if !res.IsError {
		t.Errorf("prod listed warehouse.logs outside its allowed schemas")
	}

	// Hostile cluster values: refused, nothing sent to either engine.
	huge := strings.Repeat("prod", 50_000)
	hostile := []any{
		"PROD", "Prod", " prod", "prod ", "prod\n", "\tdev", "../prod", "prod/../dev", "prod,dev", "prod dev",
		"pr\u043ed", "pro\u200bd", "prod\x00", "ｐｒｏｄ", "default", "all", "*", "", " ", "%70rod", "prod;", "'prod'",
		"SQLENGINE_PROD", "prod\u0301", huge,
		7, 0, -1, 1.5, true, false, []any{"prod"}, []any{}, map[string]any{"name": "prod"},
	}
	waitTransactionsEnded(t, marks)
	before := len(f.eng.Requests()) + len(trino.Requests())
	for _, v := range hostile {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"execute_query", map[string]any{"query": "SELECT 'hostile'"}},
			{"list_catalogs", map[string]any{}},
			{"list_schemas", map[string]any{}},
			{"list_tables", map[string]any{"catalog": "sales", "schema": "public"}},
			{"get_table_schema", map[string]any{"table": "customers"}},
			{"explain_query", map[string]any{"query": "SELECT 'hostile'"}},
		} {
			call.args["cluster"] = v
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
			cancel()
			if err == nil && !r.IsError {
				t.Errorf("%s with cluster %.40q ran: %s", call.tool, v, e2e.Text(r))
				continue
			}
			if err == nil && len(e2e.Text(r)) > 2000 {
				t.Errorf("%s with cluster %.40q: a %d-byte error echoes the value", call.tool, v, len(e2e.Text(r)))
			}
		}
	}
	if after := len(f.eng.Requests()) + len(trino.Requests()); after != before {
		t.Errorf("%d requests reached the engines for hostile cluster values", after-before)
	}
	t.Logf("%d hostile cluster values × 6 tools refused", len(hostile))
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

var _ = trinotest.DefaultCatalog

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
