package toolcalltest

import (
	"strings"
	"testing"
)

func TestSchemaDiff(t *testing.T) {
	for _, tc := range []struct {
		name, want, got string
		diff            string // "" = same meaning; else a part of the one difference
	}{
		{"key order", `{"type":"object","properties":{"a":{"type":"string","description":"x"}}}`, `{"properties":{"a":{"description":"x","type":"string"}},"type":"object"}`, ""},
		{"empty required", `{"type":"object","required":[]}`, `{"type":"object"}`, ""},
		{"required order", `{"required":["a","b"]}`, `{"required":["b","a"]}`, ""},
		{"empty properties", `{"type":"object","properties":{}}`, `{"type":"object"}`, ""},
		{"false spelt not", `{"additionalProperties":false}`, `{"additionalProperties":{"not":{}}}`, ""},
		{"true spelt empty", `{"additionalProperties":true}`, `{}`, ""},
		{"one type in a list", `{"type":["string"]}`, `{"type":"string"}`, ""},
		{"type list order", `{"type":["null","boolean"]}`, `{"type":["boolean","null"]}`, ""},
		{"number spelling", `{"maximum":10000}`, `{"maximum":1e4}`, ""},
		{"nested", `{"items":{"properties":{"k":{"minLength":1}},"required":[]}}`, `{"items":{"properties":{"k":{"minLength":1.0}}}}`, ""},
		{"a property called type is a name", `{"properties":{"type":{"type":"string"}}}`, `{"properties":{"type":{"type":["string"]}}}`, ""},
		{"description", `{"description":"a"}`, `{"description":"b"}`, `description: wanted "a", got "b"`},
		{"enum order is meaning", `{"enum":["a","b"]}`, `{"enum":["b","a"]}`, "enum[0]"},
		{"missing bound", `{"properties":{"p":{"minimum":0}}}`, `{"properties":{"p":{}}}`, "properties.p.minimum: wanted"},
		{"extra bound", `{"properties":{"p":{}}}`, `{"properties":{"p":{"maximum":1}}}`, "properties.p.maximum: not wanted"},
		{"required differs", `{"required":["a"]}`, `{"required":[]}`, "required: wanted"},
		{"closed vs open", `{"additionalProperties":false}`, `{}`, "additionalProperties"},
		{"oneOf order is meaning", `{"oneOf":[{"type":"integer"},{"type":"string"}]}`, `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, "oneOf[0].type"},
		{"integer is not number", `{"type":"integer"}`, `{"type":"number"}`, "type"},
		{"default", `{"default":"pong"}`, `{"default":"ping"}`, "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := SchemaDiff([]byte(tc.want), []byte(tc.got))
			if tc.diff == "" {
				if len(d) != 0 {
					t.Fatalf("differ: %q", d)
				}
				return
			}
			if len(d) == 0 || !strings.Contains(d[0], tc.diff) {
				t.Fatalf("diff %q, want first containing %q", d, tc.diff)
			}
		})
	}
}

func TestToolsDiff(t *testing.T) {
	want := `{"tools":[{"name":"a","title":"A","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object","properties":{},"required":[]}},{"name":"b","inputSchema":{"type":"object"}}]}`
	same := `[{"name":"b","inputSchema":{"type":"object"}},{"inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"title":"A","name":"a"}]`
	if d := ToolsDiff([]byte(want), []byte(same)); len(d) != 0 {
		t.Fatalf("same tools differ: %q", d)
	}
	other := `[{"name":"a","title":"A","annotations":{"readOnlyHint":false},"inputSchema":{"type":"object"}},{"name":"c","inputSchema":{"type":"object"}}]`
	d := ToolsDiff([]byte(want), []byte(other))
	joined := strings.Join(d, "\n")
	for _, w := range []string{"tool a: annotations.readOnlyHint", "tool b: wanted, missing", "tool c: not wanted"} {
		if !strings.Contains(joined, w) {
			t.Errorf("diff lacks %q:\n%s", w, joined)
		}
	}
	if d := ToolsDiff([]byte(`{`), []byte(`[]`)); len(d) != 1 || !strings.HasPrefix(d[0], "want:") {
		t.Errorf("bad JSON: %q", d)
	}
}
