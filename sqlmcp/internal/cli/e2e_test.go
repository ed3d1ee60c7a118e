package cli_test

// End-to-end tests of the command-line client: the built sqlmcp binary
// against the Trino-protocol test engine (trinotest, DuckDB underneath).

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

var updateE2E = flag.Bool("update-e2e", false, "rewrite the end-to-end golden files")

// engineSrv is one test engine shared by the read-only tests of this file.
var engineSrv *trinotest.Server

func TestMain(m *testing.M) {
	flag.Parse()
	srv, err := trinotest.New(trinotest.Options{LargeTableRows: 200_000, PageSize: 500})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the test engine:", err)
		os.Exit(1)
	}
	engineSrv = srv
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// baseEnv points the client at the shared engine with a private config dir.
func baseEnv(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{
		"SQLENGINE_HOST":  engineSrv.Host(),
		"SQLENGINE_PORT":  strconv.Itoa(engineSrv.Port()),
		"XDG_CONFIG_HOME": dir,
		"HOME":            dir,
		"PATH":            os.Getenv("PATH"),
		"COLUMNS":         "100",
	}
}

func envList(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// sqlmcp runs the built binary with exactly env (nothing inherited).
func sqlmcp(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	bin := e2e.Build(t, "../..")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = envList(env)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run sqlmcp %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

var volatile = regexp.MustCompile(`("query_id": )"[^"]*"|("elapsed_ms": )\d+`)

// goldenE2E compares out (query ids and timings blanked) with testdata/e2e/name.
func goldenE2E(t *testing.T, name, out string) {
	t.Helper()
	out = volatile.ReplaceAllString(out, `$1$2"X"`)
	path := filepath.Join("testdata", "e2e", name)
	if *updateE2E {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-e2e to create it)", err)
	}
	if out != string(want) {
		t.Fatalf("%s differs (run with -update-e2e to accept)\n--- got\n%s\n--- want\n%s", name, out, want)
	}
}

func TestE2ECommandsAndFormats(t *testing.T) {
	commands := []struct {
		name string
		args []string
	}{
		{"query", []string{"query", "SELECT id, name, email, country, signup_date, vip, balance FROM sales.public.customers ORDER BY id"}},
		{"query_types", []string{"query", "SELECT * FROM sales.public.orders ORDER BY id"}},
		{"catalogs", []string{"catalogs"}},
		{"schemas", []string{"schemas", "sales"}},
		{"tables", []string{"tables", "sales", "public"}},
		{"describe", []string{"describe", "sales.public.customers"}},
		{"describe_quoted", []string{"describe", `sales."Odd Schema"."Mixed Case Table"`}},
	}
	for _, c := range commands {
		for _, format := range []string{"table", "json", "csv"} {
			t.Run(c.name+"."+format, func(t *testing.T) {
				r := sqlmcp(t, baseEnv(t), "", append(c.args, "--format", format)...)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				if format == "json" && !json.Valid([]byte(r.stdout)) {
					t.Fatalf("invalid JSON:\n%s", r.stdout)
				}
				goldenE2E(t, c.name+"."+format+".golden", r.stdout)
			})
		}
	}
}

func TestE2EExplain(t *testing.T) {
	r := sqlmcp(t, baseEnv(t), "", "explain", "SELECT count(*) FROM sales.public.orders")
	if r.code != 0 || strings.TrimSpace(r.stdout) == "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlmcp(t, baseEnv(t), "", "explain", "--format", "json", "SELECT 1")
	var got struct {
		Columns []struct{ Name string } `json:"columns"`
		Rows    [][]string              `json:"rows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Columns[0].Name != "plan" || len(got.Rows) != 1 {
		t.Fatalf("explain json: %v\n%s", err, r.stdout)
	}
	// EXPLAIN ANALYZE executes; it is judged as the write it explains.
	r = sqlmcp(t, baseEnv(t), "", "explain", "ANALYZE INSERT INTO sales.crm.contacts VALUES (9, 'x', 'y', 'z')")
	if r.code != 1 || !strings.Contains(r.stderr, "SQLENGINE_ALLOW_WRITE_QUERIES") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestE2EExitCodes(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string // in stderr
	}{
		{"success", nil, []string{"query", "SELECT 1"}, 0, ""},
		{"query error", nil, []string{"query", "SELECT * FROM sales.public.no_such_table"}, 1, "no_such_table"},
		{"hint names commands", nil, []string{"query", "SELECT * FROM nowhere.x.y"}, 1, "sqlmcp catalogs, sqlmcp schemas or sqlmcp tables"},
		{"syntax error", nil, []string{"query", "SELEC 1"}, 1, "sqlmcp: "},
		{"write refused", nil, []string{"query", "DELETE FROM sales.public.customers"}, 1, "SQLENGINE_ALLOW_WRITE_QUERIES"},
		{"connection refused", map[string]string{"SQLENGINE_PORT": "1"}, []string{"catalogs"}, 1, "127.0.0.1:1"},
		{"bad env", map[string]string{"SQLENGINE_PORT": "http"}, []string{"catalogs"}, 1, `SQLENGINE_PORT="http"`},
		{"bad timeout env", map[string]string{"SQLENGINE_QUERY_TIMEOUT": "soon"}, []string{"catalogs"}, 1, "SQLENGINE_QUERY_TIMEOUT"},
		{"unknown command", nil, []string{"catalgos"}, 2, `unknown command "catalgos"`},
		{"invalid flag", nil, []string{"catalogs", "--colour"}, 2, "unknown flag --colour"},
		{"invalid format", nil, []string{"catalogs", "--format", "yaml"}, 2, "--format takes table, json or csv"},
		{"missing argument", nil, []string{"describe"}, 2, "describe needs a table name"},
		{"missing --profile", nil, []string{"catalogs", "--profile", "ghost"}, 2, `use profile "ghost" named by --profile`},
		{"missing SQLENGINE_PROFILE", map[string]string{"SQLENGINE_PROFILE": "ghost"}, []string{"catalogs"}, 1, "named by SQLENGINE_PROFILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := baseEnv(t)
			for k, v := range tt.env {
				env[k] = v
			}
			r := sqlmcp(t, env, "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if tt.code != 0 {
				if r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tt.want) {
					t.Fatalf("stdout %q; stderr %q, want one line containing %q", r.stdout, r.stderr, tt.want)
				}
			}
		})
	}
}

// Several statements in one argument run in order, each judged on its own:
// the write is refused and stops the run.
func TestE2EStatementsInOneArgument(t *testing.T) {
	r := sqlmcp(t, baseEnv(t), "", "query", "SELECT 1 AS a; DROP TABLE sales.public.customers", "--format", "csv")
	if r.code != 1 || r.stdout != "a\n1\n" || !strings.Contains(r.stderr, "statement 2 of 2: refused DROP") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlmcp(t, baseEnv(t), "", "query", "SELECT count(*) AS n FROM sales.public.customers", "--format", "csv")
	if r.stdout != "n\n5\n" {
		t.Fatalf("the table changed: %q", r.stdout)
	}
}

func TestE2EBadConfigFile(t *testing.T) {
	env := baseEnv(t)
	dir := filepath.Join(env["XDG_CONFIG_HOME"], "sqlengine")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("profiles:\n  dev:\n    host: x\n    prot: 1\n"), 0o600)
	r := sqlmcp(t, env, "", "catalogs")
	if r.code != 1 || !strings.Contains(r.stderr, `config.yaml line 4: field "profiles.dev.prot": unknown field`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{\"current\": \"a\",\n"), 0o600)
	r = sqlmcp(t, env, "", "catalogs")
	if r.code != 1 || !strings.Contains(r.stderr, "config.json line 2: malformed JSON") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// writeConfig writes config.json into env's configuration directory.
func writeConfig(t *testing.T, env map[string]string, content string) {
	t.Helper()
	dir := filepath.Join(env["XDG_CONFIG_HOME"], "sqlengine")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lastUser runs a query and returns the user the engine saw on its POST,
// which tells which precedence rung decided the connection.
func lastUser(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	marker := fmt.Sprintf("SELECT '%s-%d'", t.Name(), time.Now().UnixNano())
	r := sqlmcp(t, env, "", append([]string{"query", marker}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, q := range engineSrv.Queries() {
		if q.SQL == marker {
			return q.User
		}
	}
	t.Fatalf("the engine never saw %q", marker)
	return ""
}

// One test per precedence rung, highest first: each rung sets a different
// user, and lower rungs are all present so the test shows the rung wins.
func TestE2EPrecedence(t *testing.T) {
	port := engineSrv.Port()
	profiles := fmt.Sprintf(`{"current": "cur", "profiles": {
		"flagp": {"user": "u-flag-profile", "port": %[1]d},
		"envp": {"user": "u-env-profile", "port": %[1]d},
		"cur": {"user": "u-current", "port": %[1]d},
		"default": {"user": "u-default", "port": %[1]d}
	}}`, port)
	tests := []struct {
		name   string
		config string
		env    map[string]string
		args   []string
		want   string
	}{
		{"1 command-line flag", profiles, map[string]string{"SQLENGINE_PROFILE": "envp", "SQLENGINE_USER": "u-env"}, []string{"--profile", "flagp", "--user", "u-flag"}, "u-flag"},
		{"2 --profile", profiles, map[string]string{"SQLENGINE_PROFILE": "envp", "SQLENGINE_USER": "u-env"}, []string{"--profile", "flagp"}, "u-flag-profile"},
		{"3 SQLENGINE_PROFILE", profiles, map[string]string{"SQLENGINE_PROFILE": "envp", "SQLENGINE_USER": "u-env"}, nil, "u-env-profile"},
		{"4 current", profiles, map[string]string{"SQLENGINE_USER": "u-env"}, nil, "u-current"},
		{"5 default profile", strings.Replace(profiles, `"current": "cur",`, "", 1), map[string]string{"SQLENGINE_USER": "u-env"}, nil, "u-default"},
		{"6 SQLENGINE_* variables", fmt.Sprintf(`{"profiles": {"other": {"user": "u-other", "port": %d}}}`, port), map[string]string{"SQLENGINE_USER": "u-env"}, nil, "u-env"},
		{"7 built-in default", "", nil, nil, "sqlmcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := baseEnv(t)
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.config != "" {
				writeConfig(t, env, tt.config)
			}
			if got := lastUser(t, env, tt.args...); got != tt.want {
				t.Fatalf("engine saw user %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("profile field overrides env, env fills the rest", func(t *testing.T) {
		env := baseEnv(t)
		env["SQLENGINE_PORT"] = "1" // the profile's port wins
		env["SQLENGINE_USER"] = "u-env"
		writeConfig(t, env, fmt.Sprintf(`{"current": "p", "profiles": {"p": {"port": %d, "host": "127.0.0.1"}}}`, port))
		if got := lastUser(t, env); got != "u-env" {
			t.Fatalf("engine saw user %q", got)
		}
	})
}

func TestE2EProfileCommands(t *testing.T) {
	env := baseEnv(t)
	cfgPath := filepath.Join(env["XDG_CONFIG_HOME"], "sqlengine", "config.json")
	must := func(stdin string, args ...string) string {
		t.Helper()
		r := sqlmcp(t, env, stdin, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		return r.stdout
	}
	must("", "config", "profile", "add", "local", "--host", engineSrv.Host(), "--port", strconv.Itoa(engineSrv.Port()),
		"--user", "u-local", "--catalog", "sales", "--schema", "crm")
	st, err := os.Stat(cfgPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("new config file: %v %v", st, err)
	}
	must("pw\n", "config", "profile", "add", "tls", "--host", "trino.example.com", "--port", "443", "--ssl", "--password-stdin")
	must("", "config", "profile", "use", "local")
	// The engine's port changes per run; ephemeral ports have five digits.
	list := strings.ReplaceAll(must("", "config", "profile", "list"), strconv.Itoa(engineSrv.Port()), "PPPPP")
	goldenE2E(t, "profile_list.table.golden", list)
	goldenE2E(t, "profile_show.json.golden", must("", "config", "profile", "show", "tls", "--format", "json"))
	if out := must("", "config", "profile", "show", "tls"); strings.Contains(out, "pw") && !strings.Contains(out, "********") {
		t.Fatalf("password shown:\n%s", out)
	}
	// The current profile is used: unqualified names resolve in sales.crm.
	out := must("", "query", "SELECT count(*) AS n FROM contacts", "--format", "csv")
	if !strings.HasPrefix(out, "n\n") {
		t.Fatalf("query through the current profile: %q", out)
	}
	if q := engineSrv.Queries(); q[len(q)-1].User != "u-local" {
		t.Fatalf("engine saw user %q", q[len(q)-1].User)
	}
	before, _ := os.ReadFile(cfgPath)
	// Failed commands change nothing.
	if r := sqlmcp(t, env, "", "config", "profile", "use", "nope"); r.code != 2 {
		t.Fatalf("use nope: %d %q", r.code, r.stderr)
	}
	if r := sqlmcp(t, env, "", "config", "profile", "add", "local", "--host", "x"); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("add existing: %d %q", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(cfgPath); !bytes.Equal(before, after) {
		t.Fatal("a failed command rewrote the configuration file")
	}
	must("", "config", "profile", "remove", "tls")
	if out := must("", "config", "profile", "list", "--format", "csv"); strings.Contains(out, "tls") {
		t.Fatalf("tls still listed:\n%s", out)
	}
	// output.format from the file is the default format.
	data, _ := os.ReadFile(cfgPath)
	writeConfig(t, env, strings.Replace(string(data), "{", `{"output": {"format": "csv"},`, 1))
	if out := must("", "query", "SELECT 1 AS one"); out != "one\n1\n" {
		t.Fatalf("output.format csv not applied: %q", out)
	}
}

func TestE2EStdinAndFile(t *testing.T) {
	script := "-- two statements\nSELECT 1 AS a;\nSELECT 'x;y' AS b\n"
	r := sqlmcp(t, baseEnv(t), script, "query", "-", "--format", "csv")
	if r.code != 0 || r.stdout != "a\n1\nb\nx;y\n" {
		t.Fatalf("stdin: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	file := filepath.Join(t.TempDir(), "q.sql")
	os.WriteFile(file, []byte(script), 0o600)
	r = sqlmcp(t, baseEnv(t), "", "query", "-f", file, "--format", "csv")
	if r.code != 0 || r.stdout != "a\n1\nb\nx;y\n" {
		t.Fatalf("-f: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlmcp(t, baseEnv(t), "SELECT 1 AS a;\nSELECT * FROM nowhere.x.y;\nSELECT 3 AS c;\n", "query", "-f", "-", "--format", "csv")
	if r.code != 1 || r.stdout != "a\n1\n" || !strings.Contains(r.stderr, "statement 2 of 3") {
		t.Fatalf("failing script: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlmcp(t, baseEnv(t), "", "query", "-f", filepath.Join(t.TempDir(), "missing.sql"))
	if r.code != 1 || !strings.Contains(r.stderr, "missing.sql") {
		t.Fatalf("missing file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// findQuery returns what the engine recorded for the query with this SQL.
func findQuery(t *testing.T, sqlText string) trinotest.QueryInfo {
	t.Helper()
	for _, q := range engineSrv.Queries() {
		if q.SQL == sqlText {
			return q
		}
	}
	t.Fatalf("the engine never saw %q", sqlText)
	return trinotest.QueryInfo{}
}

func TestE2ELimitCancelsOnEngine(t *testing.T) {
	sqlText := fmt.Sprintf("SELECT id, %d AS marker FROM %s ORDER BY id", time.Now().UnixNano(), trinotest.LargeTable)
	r := sqlmcp(t, baseEnv(t), "", "query", sqlText, "--limit", "3", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var got struct {
		RowCount  int  `json:"row_count"`
		Truncated bool `json:"truncated"`
		Limit     int  `json:"limit"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.RowCount != 3 || !got.Truncated || got.Limit != 3 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := engineSrv.WaitQuery(ctx, findQuery(t, sqlText).ID)
	if err != nil || !q.Cancelled || q.RowsSent >= 200_000 {
		t.Fatalf("engine query %+v (%v): want cancelled early", q, err)
	}
}

func TestE2EStreamsLargeResult(t *testing.T) {
	r := sqlmcp(t, baseEnv(t), "", "query", "SELECT id, level FROM "+trinotest.LargeTable+" ORDER BY id", "--format", "csv")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\n"); n != 200_001 {
		t.Fatalf("got %d lines", n)
	}
	r = sqlmcp(t, baseEnv(t), "", "query", "SELECT id, message FROM "+trinotest.LargeTable+" ORDER BY id LIMIT 5000")
	if r.code != 0 || !strings.HasSuffix(r.stdout, "(5000 rows)\n") {
		t.Fatalf("exit %d, tail %q", r.code, r.stdout[max(0, len(r.stdout)-200):])
	}
}

func TestE2EHelpAndNoArgs(t *testing.T) {
	r := sqlmcp(t, baseEnv(t), "", "--help")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "NAME\n") || !strings.Contains(r.stdout, "\nCONFIGURATION\n") {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	r = sqlmcp(t, baseEnv(t), "", "describe", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "sqlmcp describe - Show the columns of a table.") {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
}

func TestE2EExplainStatementPrintsPlanText(t *testing.T) {
	r := sqlmcp(t, baseEnv(t), "", "query", "EXPLAIN SELECT count(*) FROM sales.public.orders")
	if r.code != 0 || strings.Contains(r.stdout, `\n`) || strings.Contains(r.stdout, "(1 row)") || strings.TrimSpace(r.stdout) == "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// SQLENGINE_ALLOWED_SCHEMAS holds in CLI mode as in server mode: statements
// touching other schemas are refused (exit 1) before anything runs, and
// listings show only what is allowed.
func TestE2EAllowedSchemas(t *testing.T) {
	env := baseEnv(t)
	env["SQLENGINE_ALLOWED_SCHEMAS"] = "sales.public"
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string // in stdout (code 0) or stderr
		absent   string // never in stdout
	}{
		{"allowed query", []string{"query", "--format", "csv", "SELECT count(*) AS n FROM sales.public.orders"}, 0, "n\n", ""},
		{"other catalog", []string{"query", "SELECT * FROM warehouse.logs.events LIMIT 1"}, 1, "SQLENGINE_ALLOWED_SCHEMAS", ""},
		{"join into another schema", []string{"query", "SELECT o.* FROM sales.public.orders o JOIN warehouse.logs.events e ON true LIMIT 1"}, 1, "SQLENGINE_ALLOWED_SCHEMAS", ""},
		{"explain of another schema", []string{"explain", "SELECT * FROM warehouse.logs.events"}, 1, "SQLENGINE_ALLOWED_SCHEMAS", ""},
		{"tables of another schema", []string{"tables", "warehouse", "logs"}, 1, "SQLENGINE_ALLOWED_SCHEMAS", ""},
		{"describe another schema", []string{"describe", "warehouse.logs.events"}, 1, "SQLENGINE_ALLOWED_SCHEMAS", ""},
		{"catalogs are filtered", []string{"catalogs", "--format", "csv"}, 0, "sales", "warehouse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(engineSrv.Statements())
			r := sqlmcp(t, env, "", tc.args...)
			if r.code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", r.code, tc.wantCode, r.stdout, r.stderr)
			}
			if tc.wantCode == 0 && !strings.Contains(r.stdout, tc.want) || tc.wantCode != 0 && !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("output lacks %q; stdout %q stderr %q", tc.want, r.stdout, r.stderr)
			}
			if tc.absent != "" && strings.Contains(r.stdout, tc.absent) {
				t.Fatalf("stdout shows %q: %q", tc.absent, r.stdout)
			}
			if tc.wantCode != 0 {
				// No test here runs in parallel: whatever the engine saw
				// since came from this command, and only planning is allowed.
				for _, st := range engineSrv.Statements()[before:] {
					if !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(st.Body)), "EXPLAIN") {
						t.Errorf("a refused command reached the engine with %q", st.Body)
					}
				}
			}
		})
	}
}
