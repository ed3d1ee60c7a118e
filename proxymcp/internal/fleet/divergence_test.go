package fleet

import (
	"reflect"
	"testing"
)

func srvItem(key, status, weight string) Item {
	return Item{Kind: KindServer, Key: key, Fields: []Field{{FieldStatus, status}, {FieldWeight, weight}}}
}

func TestDiverge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		instances []string
		items     map[string][]Item
		want      []string
	}{
		{"one instance compares nothing", []string{"a"}, map[string][]Item{"a": {srvItem("b/s", "UP", "1")}}, []string{}},
		{"agree", []string{"a", "b"}, map[string][]Item{"a": {srvItem("b/s", "UP", "1")}, "b": {srvItem("b/s", "UP", "1")}}, []string{}},
		{"status", []string{"lb1", "lb2"}, map[string][]Item{"lb1": {srvItem("be_app/app2", "DRAIN", "1")}, "lb2": {srvItem("be_app/app2", "UP", "1")}},
			[]string{"be_app/app2: lb1 DRAIN, lb2 UP"}},
		{"two fields at once", []string{"lb1", "lb2"}, map[string][]Item{"lb1": {srvItem("b/s", "DRAIN", "1")}, "lb2": {srvItem("b/s", "UP", "2")}},
			[]string{"b/s: lb1 DRAIN weight 1, lb2 UP weight 2"}},
		{"absent, and the others still compared", []string{"a", "b", "c"}, map[string][]Item{"a": {srvItem("b/s", "UP", "1")}, "b": {srvItem("b/s", "UP", "2")}},
			[]string{"b/s: a weight 1, b weight 2, c absent"}},
		{"absent only", []string{"a", "b"}, map[string][]Item{"b": {{Kind: KindACLEntry, Key: "10.0.0.1"}}},
			[]string{"10.0.0.1: a absent, b present"}},
		// An instance that did not answer is left out by the caller: not absent.
		{"order of first appearance", []string{"a", "b"}, map[string][]Item{
			"a": {srvItem("x/2", "UP", "1"), srvItem("x/1", "UP", "1")},
			"b": {srvItem("x/1", "DOWN", "1"), srvItem("x/2", "MAINT", "1")}},
			[]string{"x/2: a UP, b MAINT", "x/1: a UP, b DOWN"}},
		{"same key, other kind", []string{"a", "b"}, map[string][]Item{
			"a": {{Kind: KindFrontend, Key: "k", Fields: []Field{{FieldStatus, "OPEN"}}}},
			"b": {{Kind: KindFrontend, Key: "k", Fields: []Field{{FieldStatus, "OPEN"}}}, {Kind: KindMapEntry, Key: "k"}}},
			[]string{"k: a absent, b present"}},
		{"a map key listed twice", []string{"a", "b"}, map[string][]Item{
			"a": {{Kind: KindMapEntry, Key: "k", Fields: []Field{{FieldValue, "v1"}}}, {Kind: KindMapEntry, Key: "k", Fields: []Field{{FieldValue, "v2"}}}},
			"b": {{Kind: KindMapEntry, Key: "k", Fields: []Field{{FieldValue, "v1"}}}}},
			[]string{"k: a value v1 | v2, b value v1"}},
		// the comparison stops at the first differing value; the report
		// still names every instance's value
		{"only the last of four differs", []string{"a", "b", "c", "d"}, map[string][]Item{
			"a": {srvItem("b/s", "UP", "1")}, "b": {srvItem("b/s", "UP", "1")}, "c": {srvItem("b/s", "UP", "1")}, "d": {srvItem("b/s", "UP", "3")}},
			[]string{"b/s: a weight 1, b weight 1, c weight 1, d weight 3"}},
		{"first absent, the others agree", []string{"a", "b", "c"}, map[string][]Item{
			"b": {srvItem("b/s", "UP", "1")}, "c": {srvItem("b/s", "UP", "1")}},
			[]string{"b/s: a absent, b present, c present"}},
		{"first absent, the others differ", []string{"a", "b", "c"}, map[string][]Item{
			"b": {srvItem("b/s", "UP", "1")}, "c": {srvItem("b/s", "DOWN", "1")}},
			[]string{"b/s: a absent, b UP, c DOWN"}},
		{"empty value", []string{"a", "b"}, map[string][]Item{
			"a": {{Kind: KindMapEntry, Key: "k", Fields: []Field{{FieldValue, ""}}}},
			"b": {{Kind: KindMapEntry, Key: "k", Fields: []Field{{FieldValue, "v"}}}}},
			[]string{"k: a value (none), b value v"}},
	} {
		got := Diverge(tc.instances, tc.items)
		if s := Summaries(got); !reflect.DeepEqual(s, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
		}
	}
	d := Diverge([]string{"a", "b", "c"}, map[string][]Item{"a": {srvItem("b/s", "UP", "1")}, "b": {srvItem("b/s", "UP", "2")}})
	want := map[string]map[string]string{FieldPresent: {"a": "yes", "b": "yes", "c": "no"}, FieldWeight: {"a": "1", "b": "2"}}
	if !reflect.DeepEqual(d[0].Differences, want) || d[0].Kind != KindServer || d[0].Object != "b/s" {
		t.Errorf("%+v", d[0])
	}
	d = Diverge([]string{"a", "b", "c", "d"}, map[string][]Item{
		"a": {srvItem("b/s", "UP", "1")}, "b": {srvItem("b/s", "UP", "1")}, "c": {srvItem("b/s", "DOWN", "1")}, "d": {srvItem("b/s", "UP", "1")}})
	want = map[string]map[string]string{FieldStatus: {"a": "UP", "b": "UP", "c": "DOWN", "d": "UP"}}
	if len(d) != 1 || !reflect.DeepEqual(d[0].Differences, want) {
		t.Errorf("one differing field of four instances: %+v, want only %v", d, want)
	}
}

func TestToolCallString(t *testing.T) {
	c := ToolCall{Tool: "set_server_state", Args: map[string]any{"state": "ready", "backend": "be_app", "server": "app2"}}.with([]string{"lb1", "lb2"})
	if got := c.String(); got != `set_server_state {"backend":"be_app","instance":["lb1","lb2"],"server":"app2","state":"ready"}` {
		t.Error(got)
	}
}
