package stattest

import (
	"strings"
	"testing"
)

// TestRows: a table decodes to the objects rows (null and trailing cells
// left out, object_type last, a layout without one adds none), and a table
// the decoder cannot read is an error, never rows guessed from it.
func TestRows(t *testing.T) {
	for _, c := range []struct {
		name, in, want, err string
	}{
		{"answer", `{"source":"runtime_api","count":3,"format":"table","fields":["pxname","svname","slim","stot"],` +
			`"layouts":[{"object_type":"server","fields":[0,1,3]},{"object_type":"backend","fields":[0,1,2,3]},{"fields":[1]}],` +
			`"rows":[[0,"be","s1",7],[1,"be","BACKEND",null,"x"],[0,"be","s2"],[2,"z"]]}`,
			`[{"pxname":"be","svname":"s1","stot":7,"object_type":"server"},{"pxname":"be","svname":"BACKEND","stot":"x","object_type":"backend"},` +
				`{"pxname":"be","svname":"s2","object_type":"server"},{"svname":"z"}]`, ""},
		{"no rows", `{"fields":[],"layouts":[],"rows":[]}`, `[]`, ""},
		{"not JSON", `{"fields":`, "", "not a show_stat table"},
		{"objects answer", `{"fields":["a"],"rows":[{"a":1}]}`, "", "not a show_stat table"},
		{"no fields", `{"layouts":[],"rows":[]}`, "", "no fields or rows"},
		{"no layout", `{"fields":["a"],"layouts":[{"fields":[0]}],"rows":[[1,2]]}`, "", "row 0: no layout"},
		{"empty row", `{"fields":["a"],"layouts":[{"fields":[0]}],"rows":[[]]}`, "", "row 0: no layout"},
		{"too many values", `{"fields":["a"],"layouts":[{"fields":[0]}],"rows":[[0,1,2]]}`, "", "2 values for layout 0 of 1 fields"},
		{"field out of range", `{"fields":["a"],"layouts":[{"fields":[1]}],"rows":[[0,1]]}`, "", "names field 1 of 1"},
	} {
		got, err := Rows([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %s, %v; want error %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.name, got, err, c.want)
		}
	}
}
