package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

func getenv(t *testing.T, kv ...string) func(string) string {
	m := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	c, err := FromEnv(getenv(t))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Engine
	if e.Host != "localhost" || e.Port != 8080 || e.User != "sqlmcp" || e.Source != "sqlmcp" || e.URL() != "http://localhost:8080" {
		t.Errorf("engine = %+v", e)
	}
	if c.MaxRows != 1000 || c.MaxRowsCeiling != 10000 || e.MaxResultBytes != 1<<20 || e.QueryTimeout != 300*time.Second {
		t.Errorf("limits = %d %d %d %v", c.MaxRows, c.MaxRowsCeiling, e.MaxResultBytes, e.QueryTimeout)
	}
	if c.AllowWrites || !e.ReadOnlyTransactions || c.AllowedSchemas.Enabled() || c.Impersonation || c.ImpersonationField != FieldUsername {
		t.Errorf("safety = %+v", c)
	}
}

func TestEveryVariable(t *testing.T) {
	c, err := FromEnv(getenv(t,
		"SQLENGINE_HOST", "trino.example", "SQLENGINE_PORT", "8443", "SQLENGINE_USER", "bot",
		"SQLENGINE_PASSWORD", " pass word ", "SQLENGINE_CATALOG", "hive", "SQLENGINE_SCHEMA", "web",
		"SQLENGINE_SSL", "true", "SQLENGINE_SSL_INSECURE", "yes", "SQLENGINE_SOURCE", "assistant",
		"SQLENGINE_ALLOWED_SCHEMAS", "hive.web, hive.\"odd.s\"", "SQLENGINE_ALLOW_WRITE_QUERIES", "true",
		"SQLENGINE_MAX_ROWS", "50", "SQLENGINE_MAX_ROWS_CEILING", "500", "SQLENGINE_MAX_RESULT_BYTES", "4096",
		"SQLENGINE_QUERY_TIMEOUT", "1m", "SQLENGINE_ENABLE_IMPERSONATION", "true", "SQLENGINE_IMPERSONATION_FIELD", "EMAIL",
		"OAUTH_ENABLED", "true", "OAUTH_PROVIDER", "hmac", "JWT_SECRET", "0123456789abcdef0123456789abcdef", "MCP_TRANSPORT", "http",
	))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Engine
	if e.URL() != "https://trino.example:8443" || e.User != "bot" || e.Password != " pass word " || e.Catalog != "hive" || e.Schema != "web" || !e.SSLInsecure || e.Source != "assistant" {
		t.Errorf("engine = %+v", e)
	}
	if !c.AllowWrites || e.ReadOnlyTransactions || !c.AllowedSchemas.AllowsSchema("hive", "odd.s") || c.AllowedSchemas.AllowsSchema("hive", "other") {
		t.Errorf("safety = %+v", c)
	}
	if c.MaxRows != 50 || c.MaxRowsCeiling != 500 || e.MaxResultBytes != 4096 || e.QueryTimeout != time.Minute || !c.Impersonation || c.ImpersonationField != FieldEmail {
		t.Errorf("limits = %+v", c)
	}
}

func TestSchemeOverridesSSL(t *testing.T) {
	c, err := FromEnv(getenv(t, "SQLENGINE_SCHEME", "https"))
	if err != nil || c.Engine.URL() != "https://localhost:8080" {
		t.Errorf("%v %v", c.Engine.URL(), err)
	}
}

func TestInvalidVariablesAreAllNamed(t *testing.T) {
	_, err := FromEnv(getenv(t,
		"SQLENGINE_PORT", "0", "SQLENGINE_SSL", "maybe", "SQLENGINE_MAX_ROWS", "x", "SQLENGINE_MAX_RESULT_BYTES", "10",
		"SQLENGINE_QUERY_TIMEOUT", "-1s", "SQLENGINE_ALLOWED_SCHEMAS", "a.b.c", "SQLENGINE_IMPERSONATION_FIELD", "name",
		"SQLENGINE_SCHEME", "ftp", "SQLENGINE_ALLOW_WRITE_QUERIES", "sure",
	))
	var ee *envconfig.Error
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want *envconfig.Error", err)
	}
	for _, name := range []string{"SQLENGINE_PORT", "SQLENGINE_SSL", "SQLENGINE_MAX_ROWS", "SQLENGINE_MAX_RESULT_BYTES", "SQLENGINE_QUERY_TIMEOUT",
		"SQLENGINE_ALLOWED_SCHEMAS", "SQLENGINE_IMPERSONATION_FIELD", "SQLENGINE_SCHEME", "SQLENGINE_ALLOW_WRITE_QUERIES"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}

func TestCombinationsRefused(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"SQLENGINE_PASSWORD", "hunter2"}, "SQLENGINE_PASSWORD"},
		{[]string{"SQLENGINE_SSL", "true", "SQLENGINE_SCHEME", "http"}, "SQLENGINE_SCHEME"},
		{[]string{"SQLENGINE_SCHEMA", "web"}, "SQLENGINE_CATALOG"},
		{[]string{"SQLENGINE_MAX_ROWS", "20000"}, "SQLENGINE_MAX_ROWS_CEILING"},
		{[]string{"SQLENGINE_ENABLE_IMPERSONATION", "true"}, "OAUTH_ENABLED"},
	} {
		_, err := FromEnv(getenv(t, tc.env...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.env, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the password was echoed: %v", err)
		}
	}
}

func TestProfileOverridesEnvironment(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sqlengine"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := `{"current":"dev","profiles":{"dev":{"host":"dev.example","port":9443,"password":"p","ssl":{"enabled":true}},"prod":{"host":"prod.example"}}}`
	if err := os.WriteFile(filepath.Join(dir, "sqlengine", "config.json"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": dir, "SQLENGINE_HOST": "env.example", "SQLENGINE_USER": "envuser"}
	get := func(k string) string { return env[k] }
	c, err := FromEnv(get)
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine.URL() != "https://dev.example:9443" || c.Engine.User != "envuser" || c.Engine.Password != "p" || c.Profile != "dev" {
		t.Errorf("current profile: %+v", c.Engine)
	}
	env["SQLENGINE_PROFILE"] = "prod"
	c, err = FromEnv(get)
	if err != nil || c.Engine.Host != "prod.example" || c.Engine.Port != 8080 {
		t.Errorf("SQLENGINE_PROFILE=prod: %+v %v", c.Engine, err)
	}
	env["SQLENGINE_PROFILE"] = "missing"
	if _, err := FromEnv(get); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing profile: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sqlengine", "config.json"), []byte(`{"profiles":{"x":{"hots":"a"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	delete(env, "SQLENGINE_PROFILE")
	if _, err := FromEnv(get); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("a malformed file: %v", err)
	}
}

// FromEnv reads the whole configuration as sqlmcp's main does through
// serve.Program.Configure: the shared variables, then sqlmcp's, every
// problem in one error.
func FromEnv(getenv func(string) string) (Config, error) {
	r := envconfig.New(getenv)
	serve.FromEnv(r)
	c, err := Read(r, getenv)
	if err == nil {
		err = r.Err()
	}
	return c, err
}

// TestPagingAndBudgetVariables: the cursor and budget variables are read,
// default to 4m, 8 and no budget, and bad values are named.
func TestPagingAndBudgetVariables(t *testing.T) {
	c, err := FromEnv(getenv(t))
	if err != nil || c.CursorTTL != 4*time.Minute || c.CursorsPerCaller != 8 || c.MaxScanBytes != 0 || c.MaxScanRows != 0 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = FromEnv(getenv(t, "SQLENGINE_CURSOR_TTL", "9m", "SQLENGINE_CURSORS_PER_CALLER", "3", "SQLENGINE_MAX_SCAN_BYTES", "10GB", "SQLENGINE_MAX_SCAN_ROWS", "5000000"))
	if err != nil || c.CursorTTL != 9*time.Minute || c.CursorsPerCaller != 3 || c.MaxScanBytes != 10<<30 || c.MaxScanRows != 5_000_000 {
		t.Fatalf("set: %+v %v", c, err)
	}
	for _, bad := range [][2]string{
		{"SQLENGINE_CURSOR_TTL", "0s"}, {"SQLENGINE_CURSOR_TTL", "-1m"}, {"SQLENGINE_CURSOR_TTL", "soon"},
		{"SQLENGINE_CURSORS_PER_CALLER", "0"}, {"SQLENGINE_CURSORS_PER_CALLER", "-2"}, {"SQLENGINE_CURSORS_PER_CALLER", "1001"}, {"SQLENGINE_CURSORS_PER_CALLER", "many"},
		{"SQLENGINE_MAX_SCAN_BYTES", "10"}, {"SQLENGINE_MAX_SCAN_BYTES", "lots"}, {"SQLENGINE_MAX_SCAN_BYTES", "-1GB"}, {"SQLENGINE_MAX_SCAN_BYTES", "1XB"},
		{"SQLENGINE_MAX_SCAN_ROWS", "-1"}, {"SQLENGINE_MAX_SCAN_ROWS", "1e9"}, {"SQLENGINE_MAX_SCAN_ROWS", "ten"},
	} {
		if _, err := FromEnv(getenv(t, bad[0], bad[1])); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s=%q: %v", bad[0], bad[1], err)
		}
	}
}

// TestBudgetsPerCluster: SQLENGINE_<NAME>_MAX_SCAN_BYTES / _ROWS set a
// cluster's own budgets, the unprefixed ones are the fallback, and a bad
// per-cluster value is named with its cluster's variable.
func TestBudgetsPerCluster(t *testing.T) {
	c, err := FromEnv(getenv(t, "SQLENGINE_CLUSTERS", "big,small,free",
		"SQLENGINE_MAX_SCAN_ROWS", "500000", "SQLENGINE_MAX_SCAN_BYTES", "1GB",
		"SQLENGINE_BIG_MAX_SCAN_ROWS", "2000000", "SQLENGINE_BIG_MAX_SCAN_BYTES", "1TB",
		"SQLENGINE_FREE_MAX_SCAN_ROWS", "0", "SQLENGINE_FREE_MAX_SCAN_BYTES", "none"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, cl := range c.Clusters {
		got[cl.Name] = [2]int64{cl.MaxScanRows, cl.MaxScanBytes}
	}
	want := map[string][2]int64{"big": {2_000_000, 1 << 40}, "small": {500_000, 1 << 30}, "free": {0, 0}}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("cluster %s: budgets %v, want %v", n, got[n], w)
		}
	}
	if c.MaxScanRows != 2_000_000 || c.MaxScanBytes != 1<<40 {
		t.Errorf("the first cluster's budgets: %d %d", c.MaxScanRows, c.MaxScanBytes)
	}
	for _, bad := range [][2]string{
		{"SQLENGINE_SMALL_MAX_SCAN_ROWS", "-1"}, {"SQLENGINE_SMALL_MAX_SCAN_ROWS", "lots"},
		{"SQLENGINE_SMALL_MAX_SCAN_BYTES", "10"}, {"SQLENGINE_SMALL_MAX_SCAN_BYTES", "1XB"},
	} {
		_, err := FromEnv(getenv(t, "SQLENGINE_CLUSTERS", "big,small", bad[0], bad[1]))
		if err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s=%q: %v", bad[0], bad[1], err)
		}
	}
}

// TestTxAheadVariable: SQLENGINE_TX_AHEAD reaches every cluster's engine
// configuration: 30s by default, 0 turns it off, a bad value is named.
func TestTxAheadVariable(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want time.Duration
	}{
		{nil, 30 * time.Second},
		{[]string{"SQLENGINE_TX_AHEAD", "0"}, 0},
		{[]string{"SQLENGINE_TX_AHEAD", "2m"}, 2 * time.Minute},
		{[]string{"SQLENGINE_TX_AHEAD", "45", "SQLENGINE_CLUSTERS", "a,b"}, 45 * time.Second},
	} {
		c, err := FromEnv(getenv(t, tc.env...))
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		for _, cl := range c.Clusters {
			if cl.Engine.TxAhead != tc.want {
				t.Errorf("%v: cluster %q TxAhead %v, want %v", tc.env, cl.Name, cl.Engine.TxAhead, tc.want)
			}
		}
		if c.Engine.TxAhead != tc.want {
			t.Errorf("%v: default engine TxAhead %v, want %v", tc.env, c.Engine.TxAhead, tc.want)
		}
	}
	for _, bad := range []string{"-1s", "soon", "1h-", "off"} {
		if _, err := FromEnv(getenv(t, "SQLENGINE_TX_AHEAD", bad)); err == nil || !strings.Contains(err.Error(), "SQLENGINE_TX_AHEAD") {
			t.Errorf("SQLENGINE_TX_AHEAD=%q: %v", bad, err)
		}
	}
}
