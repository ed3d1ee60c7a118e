package argschematest

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestCases(t *testing.T) {
	tool := mcp.NewTool("set_weight",
		mcp.WithString("server", mcp.Required()),
		mcp.WithNumber("port", mcp.Min(1), mcp.Max(65535)),
		mcp.WithBoolean("drain"),
		mcp.WithArray("tags"),
	)
	// weight: integer or "NN%", as proxymcp declares it; any: no type.
	tool.InputSchema.Properties["weight"] = map[string]any{"oneOf": []any{
		map[string]any{"type": "integer"}, map[string]any{"type": "string", "pattern": "^[0-9]{1,3}%$"}}}
	tool.InputSchema.Properties["any"] = map[string]any{"description": "anything"}
	valid := map[string]any{"server": "be/s1"}
	cases := Cases(tool, valid)
	got := map[string][]string{}
	for _, c := range cases {
		if a, b := mustJSON(c.Args[c.Arg]), mustJSON(c.Value); a != b {
			t.Errorf("%s: args %v do not carry the value", c.Arg, c.Args)
		}
		if c.Arg != "server" && c.Args["server"] != "be/s1" {
			t.Errorf("%s: valid arguments lost: %v", c.Arg, c.Args)
		}
		b, _ := json.Marshal(c.Value)
		got[c.Arg] = append(got[c.Arg], string(b))
	}
	if valid["port"] != nil {
		t.Fatal("valid was modified")
	}
	if _, ok := got["any"]; ok {
		t.Errorf("an untyped argument got cases: %v", got["any"])
	}
	for arg, want := range map[string][]string{
		"server": {"7", "0", "1.5", "true", "false", "null", `["a"]`, "[1]", `{"a":"b"}`, "{}"},
		"port":   {`"8"`, `"8080"`, `"true"`, `"[]"`, `"{}"`, "true", "false", "null", `["a"]`, "[1]", `{"a":"b"}`, "{}", "1e+300", "-1e+300"},
		"drain":  {`"8"`, `"8080"`, `"true"`, `"[]"`, `"{}"`, "7", "0", "1.5", "null", `["a"]`, "[1]", `{"a":"b"}`, "{}"},
		"tags":   {`"8"`, `"8080"`, `"true"`, `"[]"`, `"{}"`, "7", "0", "1.5", "true", "false", "null", `{"a":"b"}`, "{}"},
		"weight": {"1.5", "true", "false", "null", `["a"]`, "[1]", `{"a":"b"}`, "{}"},
	} {
		if g := got[arg]; len(g) != len(want) {
			t.Errorf("%s: got %v, want %v", arg, g, want)
			continue
		}
		for i := range want {
			if got[arg][i] != want[i] {
				t.Errorf("%s[%d]: got %s, want %s", arg, i, got[arg][i], want[i])
			}
		}
	}
	raw := mcp.NewToolWithRawSchema("raw", "", json.RawMessage(`{"type":"object","properties":{"n":{"type":["integer","null"]}}}`))
	rc := Cases(raw, nil)
	for _, c := range rc {
		if v := mustJSON(c.Value); v == "null" || v == "7" || v == "0" {
			t.Errorf("raw schema: %v is allowed", c.Value)
		}
	}
	if len(rc) != 12 {
		t.Errorf("raw schema: %d cases, want 12", len(rc))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
