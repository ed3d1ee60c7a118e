package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runMain runs Main in-process with env (XDG_CONFIG_HOME set to a temp dir
// unless given) and returns stdout, stderr and the exit code.
func runMain(t *testing.T, env map[string]string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["XDG_CONFIG_HOME"]; !ok {
		env["XDG_CONFIG_HOME"] = t.TempDir()
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestUsageErrorsExit2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"; commands: query, catalogs, schemas, tables, describe, explain, config`},
		{[]string{"catalogs", "--bogus"}, "unknown flag --bogus"},
		{[]string{"query", "--password", "pw", "SELECT 1"}, "the password is never a flag"},
		{[]string{"query", "--password=pw", "SELECT 1"}, "the password is never a flag"},
		{[]string{"query", "--format", "xml", "SELECT 1"}, `flag --format takes table, json or csv, not "xml"`},
		{[]string{"query", "--port", "99999", "SELECT 1"}, `flag --port takes a port number from 1 to 65535`},
		{[]string{"query", "--limit", "-3", "SELECT 1"}, `flag --limit takes a number of rows`},
		{[]string{"query", "--host"}, `flag --host needs a value`},
		{[]string{"query", "--ssl=maybe", "x"}, `flag --ssl takes true or false`},
		{[]string{"query"}, `query needs SQL`},
		{[]string{"describe"}, `describe needs a table name`},
		{[]string{"explain"}, `explain needs one SQL statement`},
		{[]string{"schemas", "a", "b"}, `too many arguments for schemas: "b"`},
		{[]string{"catalogs", "-f", "x.sql"}, `flag --file is only for query`},
		{[]string{"config"}, `config needs a subcommand: profile`},
		{[]string{"config", "profile"}, `config profile needs a subcommand: list, use, show, add, remove`},
		{[]string{"config", "profile", "nuke"}, `unknown command "nuke" for config profile`},
		{[]string{"config", "profile", "use"}, `config profile use needs a profile name`},
		{[]string{"config", "profile", "add", "bad name!"}, `profile name "bad name!" is not valid`},
		{[]string{"--interactive", "catalogs"}, `--interactive takes no command`},
		{[]string{"config", "profile", "use", "ghost"}, `use profile "ghost" named by the command line: no such profile`},
		{[]string{"config", "profile", "show", "ghost"}, `no such profile`},
		{[]string{"config", "profile", "remove", "ghost"}, `no such profile`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errs, code := runMain(t, nil, "", tt.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want 2; stderr %q", code, errs)
			}
			if out != "" {
				t.Fatalf("stdout not empty: %q", out)
			}
			if !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "sqlmcp: ") {
				t.Fatalf("stderr %q, want one line containing %q", errs, tt.want)
			}
		})
	}
}

func TestHelpSectionsInOrder(t *testing.T) {
	sections := []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "FLAGS", "EXAMPLES", "ENVIRONMENT", "CONFIGURATION"}
	for _, args := range [][]string{
		{"--help"}, {}, {"-h"}, {"help"}, {"query", "--help"}, {"help", "query"}, {"catalogs", "--help"}, {"schemas", "-h"},
		{"tables", "--help"}, {"describe", "--help"}, {"explain", "--help"}, {"config", "--help"}, {"config", "profile", "--help"},
		{"config", "profile", "add", "--help"}, {"config", "profile", "list", "--help"}, {"config", "profile", "show", "--help"},
		{"config", "profile", "use", "--help"}, {"config", "profile", "remove", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errs, code := runMain(t, map[string]string{"COLUMNS": "60"}, "", args...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			pos := -1
			for _, s := range sections {
				i := strings.Index(out, "\n"+s+"\n")
				if s == "NAME" && strings.HasPrefix(out, "NAME\n") {
					i = 0
				}
				if i <= pos {
					t.Fatalf("section %s missing or out of order in\n%s", s, out)
				}
				pos = i
			}
			for _, l := range strings.Split(out, "\n") {
				// Lines longer than the width are single unbreakable words only.
				if len([]rune(l)) > 60 && strings.Contains(strings.TrimSpace(l), " ") {
					t.Fatalf("line wider than 60 columns: %q", l)
				}
			}
		})
	}
}

func TestHelpGolden(t *testing.T) {
	out, _, _ := runMain(t, map[string]string{"COLUMNS": "80"}, "", "--help")
	golden(t, "help.golden", []byte(out))
	out, _, _ = runMain(t, map[string]string{"COLUMNS": "80"}, "", "query", "--help")
	golden(t, "help_query.golden", []byte(out))
}

func TestProfileCommands(t *testing.T) {
	xdg := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": xdg, "COLUMNS": "80"}
	path := filepath.Join(xdg, "sqlengine", "config.json")
	step := func(stdin string, wantCode int, args ...string) string {
		t.Helper()
		out, errs, code := runMain(t, env, stdin, args...)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d; stderr %q", args, code, wantCode, errs)
		}
		return out + errs
	}
	step("", 0, "config", "profile", "add", "dev", "--host", "dev.example", "--port", "9090", "--catalog", "tpch", "--schema", "tiny")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, %v", st, err)
	}
	step("s3cret\n", 0, "config", "profile", "add", "prod", "--host", "prod.example", "--ssl", "--user", "alice", "--password-stdin")
	if out := step("", 1, "config", "profile", "add", "dev", "--host", "x"); !strings.Contains(out, "already exists") {
		t.Fatal(out)
	}
	step("", 0, "config", "profile", "add", "dev", "--host", "dev2.example", "--replace")
	step("", 0, "config", "profile", "use", "prod")
	list := step("", 0, "config", "profile", "list")
	golden(t, "profile_list.golden", []byte(list))
	show := step("", 0, "config", "profile", "show", "prod")
	if strings.Contains(show, "s3cret") || !strings.Contains(show, "********") {
		t.Fatalf("password not masked:\n%s", show)
	}
	golden(t, "profile_show.golden", []byte(show))
	resolved := step("", 0, "config", "profile", "show", "--port", "1234", "--format", "csv")
	if !strings.Contains(resolved, "host,prod.example,\"profile \"\"prod\"\"\"") || !strings.Contains(resolved, "port,1234,--port") {
		t.Fatalf("resolved:\n%s", resolved)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"current": "prod"`) {
		t.Fatalf("file:\n%s", data)
	}
	if out := step("", 0, "config", "profile", "remove", "prod"); !strings.Contains(out, "none is current now") {
		t.Fatal(out)
	}
	data, _ = os.ReadFile(path)
	if strings.Contains(string(data), "prod") {
		t.Fatalf("file still names prod:\n%s", data)
	}
}

func TestBadConfigFileExit1(t *testing.T) {
	xdg := t.TempDir()
	os.MkdirAll(filepath.Join(xdg, "sqlengine"), 0o700)
	bad := "{\n  \"profiles\": {\n    \"dev\": {\"hots\": \"x\"}\n  }\n}\n"
	os.WriteFile(filepath.Join(xdg, "sqlengine", "config.json"), []byte(bad), 0o600)
	for _, args := range [][]string{{"config", "profile", "list"}, {"catalogs"}, {"config", "profile", "add", "x"}} {
		_, errs, code := runMain(t, map[string]string{"XDG_CONFIG_HOME": xdg}, "", args...)
		if code != 1 || !strings.Contains(errs, `config.json line 3: field "profiles.dev.hots": unknown field`) {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	// The bad file is left as it was.
	if b, _ := os.ReadFile(filepath.Join(xdg, "sqlengine", "config.json")); string(b) != bad {
		t.Fatal("the file was rewritten")
	}
}

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		in    string
		stmts []string
		rest  string
		state scanState
	}{
		{"SELECT 1;", []string{"SELECT 1"}, "", stNormal},
		{"SELECT 1; SELECT 2;  ", []string{"SELECT 1", "SELECT 2"}, "  ", stNormal},
		{"SELECT ';' AS x", nil, "SELECT ';' AS x", stNormal},
		{"SELECT 'it''s;", nil, "SELECT 'it''s;", stString},
		{`SELECT "a;b" FROM t;`, []string{`SELECT "a;b" FROM t`}, "", stNormal},
		{"SELECT 1 -- no; end\n", nil, "SELECT 1 -- no; end\n", stNormal},
		{"SELECT /* ; */ 1;", []string{"SELECT /* ; */ 1"}, "", stNormal},
		{"SELECT /* ; ", nil, "SELECT /* ; ", stBlockComment},
		{";;  ; -- c\n", nil, " -- c\n", stNormal},
		{"SELECT 1\nFROM t\n;", []string{"SELECT 1\nFROM t"}, "", stNormal},
	}
	for _, tt := range tests {
		stmts, rest, state := splitStatements(tt.in)
		if strings.Join(stmts, "|") != strings.Join(tt.stmts, "|") || rest != tt.rest || state != tt.state {
			t.Errorf("%q: got %q %q %v", tt.in, stmts, rest, state)
		}
	}
	if got := scriptStatements("SELECT 1;\nSELECT 2 -- last\n"); len(got) != 2 || got[1] != "SELECT 2 -- last" {
		t.Errorf("script: %q", got)
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aaa bbb ccc dddddddddddddddddddddddd e", 20)
	want := []string{"aaa bbb ccc", "dddddddddddddddddddddddd", "e"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
}

// Without XDG_CONFIG_HOME and HOME there is no file: reading commands work
// from the environment, writing ones fail clearly.
func TestNoConfigDirectory(t *testing.T) {
	out, errs, code := runMain(t, map[string]string{"XDG_CONFIG_HOME": ""}, "", "config", "profile", "list", "--format", "csv")
	if code != 0 || out != "name,current,host,port,user,catalog,schema,ssl\n" {
		t.Fatalf("list: exit %d, %q %q", code, out, errs)
	}
	_, errs, code = runMain(t, map[string]string{"XDG_CONFIG_HOME": ""}, "", "config", "profile", "add", "x", "--host", "h")
	if code != 1 || !strings.Contains(errs, "set XDG_CONFIG_HOME or HOME") {
		t.Fatalf("add: exit %d, %q", code, errs)
	}
}

func TestHistoryEntry(t *testing.T) {
	tests := map[string]string{
		"SELECT a\nFROM t;":                   "SELECT a FROM t;",
		"SELECT 1 -- one\n, 2 -- two */ x\n;": "SELECT 1 /* one */ , 2 /* two * / x */ ;",
		"SELECT '--not a comment'\nFROM t;":   "SELECT '--not a comment' FROM t;",
		"SELECT /* multi\nline */ 1;":         "SELECT /* multi line */ 1;",
		"SELECT 'a  b',\t\"x\"\n;":            "SELECT 'a  b', \"x\" ;",
	}
	for in, want := range tests {
		if got := historyEntry(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
		// The entry splits into the same statements as the input.
		a, _, _ := splitStatements(in)
		b, _, _ := splitStatements(historyEntry(in))
		if len(a) != len(b) {
			t.Errorf("%q: %d statements, entry has %d", in, len(a), len(b))
		}
	}
}
