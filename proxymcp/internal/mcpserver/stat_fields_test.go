package mcpserver

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// TestShowStatFields: show_stat returns the default columns unless asked,
// every column with ["all"], exactly the columns asked otherwise, and
// refuses malformed column lists and columns HAProxy does not have.
func TestShowStatFields(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	e := newEnv(t, h, h.Runtime("unix"), nil, Options{})
	keys := func(out map[string]any) map[string]bool {
		seen := map[string]bool{}
		for _, r := range tableRows(t, out) {
			for k := range r {
				seen[k] = true
			}
		}
		return seen
	}
	total := len(statRows(t, h))

	out := e.call(t, "show_stat", nil)
	if int(out["count"].(float64)) != total {
		t.Errorf("count = %v, HAProxy has %d rows", out["count"], total)
	}
	allowed := map[string]bool{"object_type": true}
	for _, f := range defaultStatFields {
		allowed[f] = true
	}
	for k := range keys(out) {
		if !allowed[k] {
			t.Errorf("default result has column %q", k)
		}
	}
	if got := len(out["fields"].([]any)); got != len(defaultStatFields) {
		t.Errorf("fields lists %d names", got)
	}

	all := e.call(t, "show_stat", map[string]any{"fields": []any{"all"}})
	if k := keys(all); !k["hrsp_2xx"] || !k["check_rise"] || !k["iid"] || len(k) < 60 {
		t.Errorf("all columns: %d keys", len(k))
	}

	// The backend's weight is its UP servers' total: settled once app3's
	// check has failed, so that the two forms below read the same.
	waitStatus(t, h, "be_app", "app1", "UP")
	waitStatus(t, h, "be_app", "app2", "UP")
	waitStatus(t, h, "be_app", "app3", "DOWN")
	one := e.call(t, "show_stat", map[string]any{"proxy": "be_app", "fields": []any{"svname", "weight", "svname"}})
	rows := tableRows(t, one)
	if len(rows) != 4 {
		t.Fatalf("be_app rows = %d", len(rows))
	}
	for _, r := range rows {
		for k := range r {
			if k != "svname" && k != "weight" && k != "object_type" {
				t.Errorf("asked svname, weight; got %q", k)
			}
		}
		if r["svname"] == "app1" && r["weight"] != float64(100) {
			t.Errorf("app1 weight = %#v, want the number 100", r["weight"])
		}
	}
	// The objects form, asked for: the same rows.
	objects := e.call(t, "show_stat", map[string]any{"proxy": "be_app", "fields": []any{"svname", "weight", "svname"}, "format": "objects"})
	if got := list(t, objects, "rows"); !reflect.DeepEqual(got, rows) || objects["format"] != nil {
		t.Errorf("objects form = %v (format %v), the table's rows %v", got, objects["format"], rows)
	}
	// A client older than structuredContent gets the JSON of the form it
	// asked for as text.
	for _, c := range []struct {
		format any
		want   *regexp.Regexp
	}{
		{nil, regexp.MustCompile(`^\{"source":"runtime_api","count":\d+,"format":"table","fields":\["scur"\],"layouts":\[\{"object_type":"frontend","fields":\[0\]\},.*\],"rows":\[\[0,\d+\],`)},
		{"objects", regexp.MustCompile(`^\{"source":"runtime_api","count":\d+,"fields":\["scur"\],"rows":\[\{"scur":\d+,"object_type":"frontend"\},`)},
	} {
		args := map[string]any{"fields": []any{"scur"}}
		if c.format != nil {
			args["format"] = c.format
		}
		if txt := text(e.raw(t, "show_stat", args)); !c.want.MatchString(txt) {
			t.Errorf("format %v: text content = %.200s", c.format, txt)
		}
	}

	for _, bad := range []struct {
		fields any
		want   string
	}{
		{[]any{"scur", "nosuch"}, `no column ["nosuch"]`},
		// The schema's check (what a caller sees first, through serve too):
		// an item that is no column name, a non-array, too many items.
		{[]any{"SCUR"}, `"fields[0]" must match ^[a-z0-9_]{1,64}$`},
		{[]any{"all", "scur"}, "stands alone"},
		{[]any{}, "non-empty array"},
		{"scur", `"fields" must be an array`},
		{[]any{1}, `"fields[0]" must be a string`},
		{[]any{"scur;show info"}, `"fields[0]" must match ^[a-z0-9_]{1,64}$`},
		{[]any{"s\ncur"}, `"fields[0]" must match ^[a-z0-9_]{1,64}$`},
		{[]any{strings.Repeat("a", 65)}, `"fields[0]" must match ^[a-z0-9_]{1,64}$`},
		{make([]any, 257), "maxItems: got 257, want 256"},
	} {
		e.fail(t, "show_stat", map[string]any{"fields": bad.fields}, `"fields`, bad.want)
	}
}

// TestShowStatSummary: the summary counts rows by type and servers by
// status and names the DOWN servers, more than ten as a count.
func TestShowStatSummary(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	hp := haproxy.New(h.Runtime("unix"), nil)
	waitStatus(t, h, "be_app", "app3", "DOWN")
	for i := 0; i < 12; i++ {
		exec(t, h, fmt.Sprintf("add server be_api/down%02d 127.0.0.1:1", i))
		exec(t, h, fmt.Sprintf("set server be_api/down%02d state ready", i))
		exec(t, h, fmt.Sprintf("set server be_api/down%02d health down", i))
	}
	table, src, err := hp.ShowStat(context.Background(), haproxy.StatFilter{})
	if err != nil {
		t.Fatal(err)
	}
	table, _ = table.Columns(defaultStatFields)
	s := statSummary(src, table)
	for _, want := range []string{
		fmt.Sprintf("%d statistics rows from the runtime api", len(table.Rows)),
		"17 server,", "Servers by status: 13 DOWN, 4 UP.",
		"DOWN: be_app/app3, be_api/down00,", "be_api/down08 and 3 more.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}
