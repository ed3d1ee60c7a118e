package haproxy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// versionFixture returns one captured answer of branch with the severity
// prefix handled as proxymcp's client does: the body, or the HAProxy error.
func versionFixture(t *testing.T, branch, file string) (string, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(branch), file))
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./proxymcp/internal/haproxy -run TestCaptureFixtures -update)", err)
	}
	return runtimeapi.Classify(file, string(b))
}

func mustFixture(t *testing.T, branch, file string) string {
	t.Helper()
	out, err := versionFixture(t, branch, file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return out
}

// TestParsersOnEveryVersion runs the parsers on each branch's real answers
// (testdata/<branch>/): by header and key, so new columns are new fields.
func TestParsersOnEveryVersion(t *testing.T) {
	for _, branch := range haproxytest.Branches {
		t.Run(branch, func(t *testing.T) {
			v, err := ParseVersion(mustFixture(t, branch, "show_version.txt"))
			if err != nil || v.Raw[:len(branch)+1] != branch+"." {
				t.Fatalf("show version = %+v, %v", v, err)
			}
			info := ParseInfo(mustFixture(t, branch, "show_info.txt"))
			if info["Name"] != "HAProxy" || !strings.HasPrefix(info["Version"].(string), branch+".") {
				t.Errorf("show info Name/Version = %v %v", info["Name"], info["Version"])
			}
			if _, ok := info["Uptime_sec"].(int64); !ok {
				t.Errorf("show info Uptime_sec = %#v, want an integer", info["Uptime_sec"])
			}

			rows, err := ParseStatCSV([]byte(mustFixture(t, branch, "show_stat.txt")))
			if err != nil {
				t.Fatal(err)
			}
			var app1, fe *StatRow
			for i, r := range rows {
				switch {
				case r.Str("pxname") == "be_app" && r.Str("svname") == "app1":
					app1 = &rows[i]
				case r.Str("pxname") == "fe_tls" && r.Str("svname") == "FRONTEND":
					fe = &rows[i]
				}
			}
			if app1 == nil || fe == nil {
				t.Fatalf("show stat lacks be_app/app1 or fe_tls (%d rows)", len(rows))
			}
			if app1.Type() != "server" || app1.Int("weight") != 100 || !strings.HasPrefix(app1.Str("status"), "UP") {
				t.Errorf("app1: type %q weight %d status %q", app1.Type(), app1.Int("weight"), app1.Str("status"))
			}
			if fe.Type() != "frontend" {
				t.Errorf("fe_tls type %q", fe.Type())
			}

			state := ParseTable(mustFixture(t, branch, "show_servers_state.txt"))
			s := findRow(state, "srv_name", "app3")
			if s == nil || s["be_name"] != "be_app" || s["srv_op_state"] != int64(0) || s["srv_uweight"] != int64(1) {
				t.Errorf("show servers state app3 = %v", s)
			}
			conn := ParseTable(mustFixture(t, branch, "show_servers_conn_be_app.txt"))
			if len(conn) != 3 || findRow(conn, "bkname/svname", "be_app/app1") == nil {
				t.Errorf("show servers conn be_app = %v", conn)
			}
			for _, r := range conn {
				if _, ok := r["used_cur"].(int64); !ok {
					t.Errorf("used_cur = %#v", r["used_cur"])
				}
			}

			sess := ParseSessions(mustFixture(t, branch, "show_sess.txt"))
			if len(sess) != 1 || sess[0].Frontend != "GLOBAL" || !strings.HasPrefix(sess[0].ID, "0x") {
				t.Errorf("show sess = %+v", sess)
			}

			certs := ParseCertList(mustFixture(t, branch, "show_ssl_cert.txt"))
			if !slices.Equal(certs, []string{"$DIR/site.pem"}) {
				t.Errorf("show ssl cert = %q", certs)
			}
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			c, err := ParseCert(mustFixture(t, branch, "show_ssl_cert_site.txt"), now)
			if err != nil {
				t.Fatal(err)
			}
			if c.File != "$DIR/site.pem" || c.Status != "Used" || c.Algorithm != "EC256" ||
				!slices.Contains(c.SANs, "DNS:www.proxymcp-test.example") || !strings.Contains(c.Subject, "CN=proxymcp-test.example") {
				t.Errorf("cert = %+v", c)
			}
			after, err := time.Parse(time.RFC3339, c.NotAfter)
			if err != nil || c.DaysRemaining == nil || *c.DaysRemaining != daysUntil(after, now) || *c.DaysRemaining < 80 || c.Expired {
				t.Errorf("not_after %q days %v expired %v (%v)", c.NotAfter, c.DaysRemaining, c.Expired, err)
			}

			// Error texts and severities proxymcp relies on.
			errs := map[string]func(*runtimeapi.ReplyError) bool{
				"frobnicate.txt":           (*runtimeapi.ReplyError).UnknownCommand,
				"set_weight_nosuch.txt":    (*runtimeapi.ReplyError).NotFound,
				"show_ssl_cert_nosuch.txt": func(e *runtimeapi.ReplyError) bool { return strings.Contains(e.Message, "Not found") },
				"add_server_exists.txt":    func(e *runtimeapi.ReplyError) bool { return strings.HasPrefix(e.Message, "Already exists") },
				"del_server_not_maint.txt": func(e *runtimeapi.ReplyError) bool { return strings.Contains(e.Message, "maintenance mode") },
			}
			for file, is := range errs {
				_, err := versionFixture(t, branch, file)
				var re *runtimeapi.ReplyError
				if !errors.As(err, &re) || re.Severity > 3 && !re.UnknownCommand() || !is(re) {
					t.Errorf("%s: %v", file, err)
				}
			}
			// Add/del server rules are the same on all three: a new server can
			// be deleted at once (it starts in maint), one from the
			// configuration once in maint.
			for _, file := range []string{"add_server_dyn.txt", "del_server_dyn.txt", "set_server_state_maint_app2.txt", "del_server_static.txt"} {
				if _, err := versionFixture(t, branch, file); err != nil {
					t.Errorf("%s: %v", file, err)
				}
			}
		})
	}
}

// TestVersionDifferences pins what differs between the branches, as
// detected from their help and answers: a change in a new package shows
// here first.
func TestVersionDifferences(t *testing.T) {
	type want struct {
		has, lacks []string
	}
	wants := map[string]want{
		"2.6": {has: []string{"show ssl cert", "show servers conn", "add server", "del server"},
			lacks: []string{"echo", "wait", "show ssl sni", "dump ssl cert", "debug counters"}},
		"3.0": {has: []string{"wait", "debug counters", "show ssl cert"},
			lacks: []string{"echo", "show ssl sni", "dump ssl cert", "acme status"}},
		"3.2": {has: []string{"echo", "wait", "show ssl sni", "dump ssl cert", "acme status", "acme renew"},
			lacks: []string{"add backend"}},
	}
	for _, branch := range haproxytest.Branches {
		t.Run(branch, func(t *testing.T) {
			cmds := ParseHelp(mustFixture(t, branch, "help.txt"))
			for _, c := range wants[branch].has {
				if !cmds.Has(c) {
					t.Errorf("help lacks %q", c)
				}
			}
			for _, c := range wants[branch].lacks {
				if cmds.Has(c) {
					t.Errorf("help has %q", c)
				}
			}
			v, _ := ParseVersion(mustFixture(t, branch, "show_version.txt"))
			cp := Capabilities{Version: v, Commands: cmds}
			// echo: a command help lists from 3.1; "Unknown command" before.
			_, echoErr := versionFixture(t, branch, "echo.txt")
			if (cp.Check("echo") == nil) != (echoErr == nil) {
				t.Errorf("echo: detected %v, HAProxy answered %v", cp.Check("echo"), echoErr)
			}
			// add server help (3.2) is a mode of add server: the version decides.
			_, kwErr := versionFixture(t, branch, "add_server_help.txt")
			if (cp.Check("add server help") == nil) != (kwErr == nil) {
				t.Errorf("add server help: detected %v, HAProxy answered %v", cp.Check("add server help"), kwErr)
			}
			_, sniErr := versionFixture(t, branch, "show_ssl_sni.txt")
			if (cp.Check("show ssl sni") == nil) != (sniErr == nil) {
				t.Errorf("show ssl sni: detected %v, HAProxy answered %v", cp.Check("show ssl sni"), sniErr)
			}
			_, waitErr := versionFixture(t, branch, "wait_srv_removable.txt")
			if (cp.Check("wait") == nil) != (waitErr == nil) {
				t.Errorf("wait: detected %v, HAProxy answered %v", cp.Check("wait"), waitErr)
			}
			if err := cp.Check("show ssl sni"); err != nil && !strings.Contains(err.Error(), "needs HAProxy 3.2 or newer; this HAProxy is "+v.Raw) {
				t.Errorf("unsupported error = %v", err)
			}
		})
	}
}

func TestParseSNI(t *testing.T) {
	first, err := ParseSNI(mustFixture(t, "3.2", "show_ssl_sni.txt"), time.Now())
	if err != nil || len(first) == 0 {
		t.Fatal(first, err)
	}
	after, err := time.Parse(time.RFC3339, first[0].NotAfter)
	if err != nil {
		t.Fatal(err)
	}
	now := after.Add(36 * time.Minute) // just expired; the fixture's dates move with each capture
	l, err := ParseSNI(mustFixture(t, "3.2", "show_ssl_sni.txt"), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 3 || l[0].Frontend != "fe_tls" || l[0].SNI != "proxymcp-test.example" || l[2].SNI != "*" ||
		l[0].File != "$DIR/site.pem" || l[0].Type != "ecdsa" || l[0].NegativeFilter != "" || !strings.HasSuffix(l[0].Bind, "haproxy.cfg:54") {
		t.Fatalf("sni = %+v", l)
	}
	if *l[0].DaysRemaining != -1 {
		t.Errorf("days remaining just after expiry = %d, want -1", *l[0].DaysRemaining)
	}
	for _, bad := range []string{"no header\tline\n", "# a\tNotAfter\nx\tnot a date\n"} {
		if _, err := ParseSNI(bad, now); err == nil {
			t.Errorf("ParseSNI(%q) accepted", bad)
		}
	}
}

func TestParseCertEdges(t *testing.T) {
	base := "Filename: /c.pem\nnotBefore: Jan  2 03:04:05 2026 GMT\nnotAfter: Mar  1 00:00:00 2026 GMT\n"
	cases := []struct {
		name    string
		now     time.Time
		days    int
		expired bool
	}{
		{"well before", time.Date(2026, 1, 30, 0, 0, 0, 0, time.UTC), 30, false},
		{"a second before", time.Date(2026, 2, 28, 23, 59, 59, 0, time.UTC), 0, false},
		{"at expiry", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 0, true},
		{"an hour after", time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC), -1, true},
		{"a year after", time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC), -365, true},
	}
	for _, c := range cases {
		got, err := ParseCert(base, c.now)
		if err != nil || got.NotAfter != "2026-03-01T00:00:00Z" || got.NotBefore != "2026-01-02T03:04:05Z" ||
			*got.DaysRemaining != c.days || got.Expired != c.expired {
			t.Errorf("%s: %+v days %v (%v)", c.name, got, *got.DaysRemaining, err)
		}
	}
	for _, bad := range []string{"", "notAfter: Mar  1 00:00:00 2026 GMT\n", "Filename: /c.pem\nnotAfter: yesterday\n", "Filename: /c.pem\nnotBefore: 2026-01-01\n"} {
		if _, err := ParseCert(bad, time.Now()); err == nil {
			t.Errorf("ParseCert(%q) accepted", bad)
		}
	}
}

func TestParseHelpHostile(t *testing.T) {
	// Only indented "words : text" lines count; argument markers end a command.
	cmds := ParseHelp("The following commands are valid at this level:\n" +
		"  show ssl cert [<certfile>]              : display\n" +
		"  disable server (DEPRECATED)             : x\n" +
		"  set anon on [value]                     : y\n" +
		"not indented : z\n" +
		"  no colon here\n" +
		"  : empty command\n" +
		"  wait {-h|<delay_ms>} cond [args...]     : w\n")
	want := Commands{"show ssl cert": true, "disable server": true, "set anon on": true, "wait": true}
	if len(cmds) != len(want) {
		t.Fatalf("commands = %v", cmds)
	}
	for c := range want {
		if !cmds[c] {
			t.Errorf("missing %q in %v", c, cmds)
		}
	}
	if !cmds.Has("show ssl") || cmds.Has("show ssl sni") || cmds.Has("wai") || cmds.Has("") {
		t.Error("Has matches words, not prefixes of words")
	}
}

func findRow(rows []map[string]any, key, val string) map[string]any {
	for _, r := range rows {
		if r[key] == val {
			return r
		}
	}
	return nil
}

// TestParseTableArrayColumns: "idle_per_thr[2]" takes one value per thread
// as a list; a broken count stays a plain column.
func TestParseTableArrayColumns(t *testing.T) {
	for _, branch := range haproxytest.Branches {
		rows := ParseTable(mustFixture(t, branch, "show_servers_conn_be_app.txt"))
		r := findRow(rows, "bkname/svname", "be_app/app2")
		l, ok := r["idle_per_thr"].([]any)
		if !ok || len(l) != 2 || l[0] != int64(0) || r["idle_cur"] != int64(0) || r["purge_delay"] != int64(5000) {
			t.Errorf("%s: %v", branch, r)
		}
	}
	cases := []struct {
		text string
		want map[string]any
	}{
		{"# a b[3] c\n1 2 3 4 5\n", map[string]any{"a": int64(1), "b": []any{int64(2), int64(3), int64(4)}, "c": int64(5)}},
		{"# a b[3]\n1 2\n", map[string]any{"a": int64(1), "b": []any{int64(2)}}},
		{"# a b[x] c\n1 2 3\n", map[string]any{"a": int64(1), "b[x]": int64(2), "c": int64(3)}},
		{"# a b[0] c\n1 2 3\n", map[string]any{"a": int64(1), "b[0]": int64(2), "c": int64(3)}},
		{"# a [2]\n1 2 3\n", map[string]any{"a": int64(1), "[2]": int64(2)}},
		{"# a b[99999999999]\n1 2\n", map[string]any{"a": int64(1), "b[99999999999]": int64(2)}},
		{"# a - b\n1 - x y\n", map[string]any{"a": int64(1), "b": "x"}},
	}
	for _, c := range cases {
		rows := ParseTable(c.text)
		if len(rows) != 1 || fmt.Sprint(rows[0]) != fmt.Sprint(c.want) {
			t.Errorf("ParseTable(%q) = %v, want %v", c.text, rows, c.want)
		}
	}
}
