package haproxy

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseStatCSVFixtures(t *testing.T) {
	for _, name := range []string{"show_stat.txt", "http_stats.csv"} {
		t.Run(name, func(t *testing.T) {
			rows, err := ParseStatCSV([]byte(fixture(t, name)))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 13 {
				t.Fatalf("rows = %d, want 13", len(rows))
			}
			var app1, fe *StatRow
			for i, r := range rows {
				if r.Str("pxname") == "be_app" && r.Str("svname") == "app1" {
					app1 = &rows[i]
				}
				if r.Str("pxname") == "fe_web" {
					fe = &rows[i]
				}
				if _, bad := r.Get("-"); bad {
					t.Error("separator column kept")
				}
				if _, bad := r.Get(""); bad {
					t.Error("empty column kept")
				}
			}
			if app1 == nil || fe == nil {
				t.Fatal("be_app/app1 or fe_web missing")
			}
			if app1.Type() != "server" || fe.Type() != "frontend" {
				t.Errorf("types: %q %q", app1.Type(), fe.Type())
			}
			if w, ok := app1.Get("weight"); !ok || w != int64(100) {
				t.Errorf("weight = %#v, want int64 100", w)
			}
			if app1.Str("status") != "UP" {
				t.Errorf("status = %q", app1.Str("status"))
			}
			if fe.Int("slim") != 9974 {
				t.Errorf("fe_web slim = %d", fe.Int("slim"))
			}
		})
	}
}

func TestParseStatCSVQuotedFields(t *testing.T) {
	// A health check answering `503 Busy, try "later"` puts commas and
	// doubled quotes into last_chk: encoding/csv must keep the columns aligned.
	in := "# pxname,svname,status,last_chk,weight,type,-,extra,\n" +
		"be_app,app1,DOWN,\"Busy, try \"\"later\"\"\",7,2,,x,\n"
	rows, err := ParseStatCSV([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if got := r.Str("last_chk"); got != `Busy, try "later"` {
		t.Errorf("last_chk = %q", got)
	}
	if r.Int("weight") != 7 || r.Type() != "server" || r.Str("extra") != "x" {
		t.Errorf("row = %#v", r)
	}
	// The JSON form keeps column order, numbers as numbers, and escapes like encoding/json.
	all, _ := StatTable{Rows: rows, h: rows[0].h}.Columns(nil)
	got := all.AppendJSON(nil)
	want := `[{"pxname":"be_app","svname":"app1","status":"DOWN","last_chk":"Busy, try \"later\"","weight":7,"type":2,"extra":"x","object_type":"server"}]`
	if string(got) != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
}

// TestStatTableColumns: chosen columns come in the order asked, object_type
// always, unknown names are refused by name, and only JSON-valid integers
// are written as numbers.
func TestStatTableColumns(t *testing.T) {
	in := "# pxname,svname,scur,status,weight,type,addr,qtime,-,\n" +
		"be,s1,3,UP,+5,2,10.0.0.1:80,007,,\n" +
		"be,s2,-4,DOWN,9223372036854775808,2,,-9223372036854775808,,\n" +
		"be,BACKEND,0,UP,,1,,,,\n"
	rows, err := ParseStatCSV([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	tab := StatTable{Rows: rows, h: rows[0].h}
	sel, err := tab.Columns([]string{"status", "svname", "object_type", "weight", "qtime", "status"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sel.Names(), ","); got != "status,svname,weight,qtime" {
		t.Errorf("names = %s", got)
	}
	want := `[{"status":"UP","svname":"s1","weight":"+5","qtime":"007","object_type":"server"},` +
		`{"status":"DOWN","svname":"s2","weight":"9223372036854775808","qtime":-9223372036854775808,"object_type":"server"},` +
		`{"status":"UP","svname":"BACKEND","object_type":"backend"}]`
	got := sel.AppendJSON(nil)
	if string(got) != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
	if !json.Valid(got) {
		t.Error("invalid JSON")
	}
	var uc *UnknownColumnsError
	if _, err := tab.Columns([]string{"scur", "nosuch", "Status"}); !errors.As(err, &uc) || strings.Join(uc.Names, ",") != "nosuch,Status" {
		t.Errorf("unknown columns: %v", err)
	}
	if got := string(StatTable{}.AppendJSON(nil)); got != "[]" {
		t.Errorf("empty table = %s", got)
	}
	for s, want := range map[string]bool{"0": true, "-0": true, "12": true, "-12": true, "": false, "-": false, "01": false, "+1": false,
		"1.5": false, "1e3": false, "9223372036854775807": true, "9223372036854775808": false, "99999999999999999999": false, " 1": false} {
		if isInt(s) != want {
			t.Errorf("isInt(%q) = %v", s, !want)
		}
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"plain", "quote\" back\\slash", "ctl\x01\x1f\n\r\t", "uni é ✓ \u2028 \u2029", "bad \xff utf8", "<html>&"} {
		want, _ := json.Marshal(s)
		want = bytes.ReplaceAll(want, []byte(`\u003c`), []byte("<"))
		want = bytes.ReplaceAll(want, []byte(`\u003e`), []byte(">"))
		want = bytes.ReplaceAll(want, []byte(`\u0026`), []byte("&"))
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s want %s", s, got, want)
		}
	}
}

func TestParseStatCSVRejectsNonCSV(t *testing.T) {
	if _, err := ParseStatCSV([]byte("<html>login</html>")); err == nil {
		t.Fatal("want error")
	}
}

func TestParseInfo(t *testing.T) {
	info := ParseInfo(fixture(t, "show_info.txt"))
	if info["Name"] != "HAProxy" || info["Version"] != "2.6.12-1+deb12u4" {
		t.Errorf("name/version: %v %v", info["Name"], info["Version"])
	}
	if n, ok := info["Nbthread"].(int64); !ok || n != 2 {
		t.Errorf("Nbthread = %#v", info["Nbthread"])
	}
	if _, ok := info["Uptime"].(string); !ok {
		t.Errorf("Uptime = %#v", info["Uptime"])
	}
}

func TestParseServersState(t *testing.T) {
	rows := ParseTable(fixture(t, "show_servers_state.txt"))
	if len(rows) != 5 {
		t.Fatalf("rows = %d, want 5: %v", len(rows), rows)
	}
	r := rows[0]
	if r["be_name"] != "be_app" || r["srv_name"] != "app1" || r["srv_addr"] != "127.0.0.1" || r["srv_uweight"] != int64(100) || r["srv_port"] != int64(19001) {
		t.Errorf("row 0 = %v", r)
	}
}

func TestParsePatternLists(t *testing.T) {
	maps := ParsePatternLists(fixture(t, "show_map.txt"))
	if len(maps) != 1 || maps[0].ID != 5 || maps[0].File != "./hosts.map" || maps[0].Ref != "./hosts.map" || maps[0].EntryCount != 2 {
		t.Errorf("maps = %+v", maps)
	}
	acls := ParsePatternLists(fixture(t, "show_acl.txt"))
	if len(acls) != 6 || acls[1].File != "" || acls[1].Ref != "#1" || acls[2].EntryCount != 2 {
		t.Errorf("acls = %+v", acls)
	}
}

func TestParsePatternEntries(t *testing.T) {
	m := ParsePatternEntries(fixture(t, "show_map_hosts.map.txt"), true)
	if len(m) != 2 || m[0].Key != "www.example.com" || m[0].Value != "be_app" || m[0].EntryID != "0x55ef19f41940" {
		t.Errorf("map = %+v", m)
	}
	a := ParsePatternEntries(fixture(t, "show_acl_blocked.acl.txt"), false)
	if len(a) != 2 || a[1].Key != "198.51.100.0/24" || a[1].Value != "" {
		t.Errorf("acl = %+v", a)
	}
}

func TestParseKeyValues(t *testing.T) {
	got := ParseKeyValues(`type=str, case=sensitive, found=yes, idx=tree, key="api.example.com", value="be api, x", type="str"`)
	if got["found"] != "yes" || got["key"] != "api.example.com" || got["value"] != "be api, x" || got["type"] != "str" {
		t.Errorf("got %v", got)
	}
}

func TestParseTables(t *testing.T) {
	l := ParseTableList(fixture(t, "show_table.txt"))
	if len(l) != 1 || l[0] != (TableInfo{Name: "be_app", Type: "ip", Size: 102400, Used: 0}) {
		t.Errorf("tables = %+v", l)
	}
	e := ParseTableEntries("# table: be_app, type: ip, size:102400, used:1\n0x55e8: key=127.0.0.1 use=0 exp=1799982 gpc0=0 conn_cur=0 http_req_rate(10000)=3\n")
	if len(e) != 1 || e[0]["key"] != "127.0.0.1" || e[0]["http_req_rate(10000)"] != int64(3) || e[0]["entry_id"] != "0x55e8" {
		t.Errorf("entries = %v", e)
	}
}

func TestParseSessions(t *testing.T) {
	s := ParseSessions("0x55e889caf120: proto=tcpv4 src=127.0.0.1:60274 fe=fe_api be=be_api srv=api1 ts=00 epoch=0x3 age=1s calls=2\n0x1: proto=unix_stream src=unix:1 fe=GLOBAL be=<NONE> srv=<none>\n")
	if len(s) != 2 || s[0].ID != "0x55e889caf120" || s[0].Frontend != "fe_api" || s[0].Backend != "be_api" || s[0].Server != "api1" || s[0].Fields["calls"] != int64(2) {
		t.Errorf("sessions = %+v", s)
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in           string
		major, minor int
		bad          bool
	}{
		{"2.6.12-1+deb12u4", 2, 6, false},
		{"3.1-dev4", 3, 1, false},
		{"3.0.5", 3, 0, false},
		{"garbage", 0, 0, true},
	} {
		v, err := ParseVersion(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && (v.Major != tc.major || v.Minor != tc.minor)) {
			t.Errorf("%s: %+v %v", tc.in, v, err)
		}
	}
	v := Version{Major: 2, Minor: 6}
	for _, s := range (Capabilities{Version: v}).Support() {
		switch s.Command {
		case "echo":
			if s.Supported {
				t.Error("echo on 2.6")
			}
		case "add server":
			if !s.Supported {
				t.Error("add server on 2.6")
			}
		}
	}
}

func TestParseServersConn(t *testing.T) {
	rows := ParseTable("\n# bkname/svname bkid/svid addr port - purge_delay used_cur used_max need_est unsafe_nb safe_nb idle_lim idle_cur idle_per_thr[2]\nbe_app/app1 4/1 127.0.0.1 39111 - 5000 0 1 1 0 0 -1 0 0 0\n")
	if len(rows) != 1 || rows[0]["bkname/svname"] != "be_app/app1" || rows[0]["purge_delay"] != int64(5000) || rows[0]["idle_lim"] != int64(-1) {
		t.Fatalf("rows = %v", rows)
	}
	if _, ok := rows[0]["-"]; ok {
		t.Error("separator column kept")
	}
}

// TestParseStatCSVMatchesEncodingCSV: the in-place splitter gives the same
// records as encoding/csv on every shape HAProxy can send, and hostile ones.
func TestParseStatCSVMatchesEncodingCSV(t *testing.T) {
	head := "# pxname,svname,status,last_chk,type,-,\n"
	for _, body := range []string{
		"",
		"be,s1,UP,ok,2,,\n",
		"be,s1,UP,ok,2,,",                      // no final newline
		"be,s1,UP,ok,2,,\r\nbe,s2,UP,,2,,\r\n", // CRLF
		"\n\nbe,s1,UP,ok,2,,\n\n",              // empty lines
		"be,s1,DOWN,\"Busy, try \"\"later\"\"\",2,,\n",     // quoted comma and quotes
		"be,s1,DOWN,\"two\nlines\",2,,\nbe,s2,UP,,2,,\n",   // newline inside quotes
		"be,s1,DOWN,\"a\"\"\",2,,\nbe,\"s,2\",UP,\"\",2,,", // several quoted rows
		"be,s1,UP,ok,2,,,extra,more\n",                     // more cells than header
		"be,s1\n",                                          // fewer cells
		"be,s1,\"ü ✓ \xff\",x,2,,\n",                       // non-ASCII and invalid UTF-8
	} {
		in := head + body
		rows, err := ParseStatCSV([]byte(in))
		if err != nil {
			t.Errorf("%q: %v", body, err)
			continue
		}
		r := csv.NewReader(strings.NewReader(in[2:]))
		r.FieldsPerRecord = -1
		want, err := r.ReadAll()
		if err != nil {
			t.Fatalf("%q: reference: %v", body, err)
		}
		want = want[1:]
		if len(rows) != len(want) {
			t.Errorf("%q: %d rows, want %d", body, len(rows), len(want))
			continue
		}
		for i := range want {
			w := want[i]
			if len(w) > len(rows[i].record()) {
				w = w[:len(rows[i].record())]
			}
			if strings.Join(rows[i].record(), "|") != strings.Join(w, "|") {
				t.Errorf("%q row %d: %q, want %q", body, i, rows[i].record(), w)
			}
		}
	}
	for _, bad := range []string{"be,s\"1,UP\n", "be,\"unterminated,UP\n"} {
		if _, err := ParseStatCSV([]byte(head + bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}
