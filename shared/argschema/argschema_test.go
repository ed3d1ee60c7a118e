package argschema

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func tool() mcp.Tool {
	return mcp.NewTool("set_server",
		mcp.WithString("backend", mcp.Required(), mcp.Pattern("^[A-Za-z0-9_.:-]{1,64}$")),
		mcp.WithInteger("port", mcp.Min(1), mcp.Max(65535)),
		mcp.WithBoolean("check"),
		mcp.WithString("state", mcp.Enum("ready", "drain", "maint")),
		mcp.WithArray("tags", mcp.WithStringItems()),
	)
}

// weight is proxymcp's deliberately loose argument: an integer or a
// percentage string.
func weightTool() mcp.Tool {
	return mcp.NewToolWithRawSchema("set_weight", "", json.RawMessage(`{"type":"object","properties":{
		"weight":{"oneOf":[{"type":"integer","minimum":0,"maximum":256},{"type":"string","pattern":"^[0-9]{1,3}%$"}]}},
		"required":["weight"],"additionalProperties":false}`))
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool mcp.Tool
		args string
		want string // "" = valid
	}{
		{"valid", tool(), `{"backend":"be_app","port":8080,"check":true,"state":"drain","tags":["a"]}`, ""},
		{"integer written as 8080.0", tool(), `{"backend":"be","port":8080.0}`, ""},
		{"no arguments at all", tool(), ``, `missing required argument "backend"`},
		{"null arguments", tool(), `null`, `missing required argument "backend"`},
		{"string arguments", tool(), `"x"`, `the arguments must be an object, got the string "x"`},
		{"above maximum", tool(), `{"backend":"b","port":65536}`, `argument "port" must be at most 65535, got the number 65536`},
		{"array arguments", tool(), `[1]`, `the arguments must be an object, got an array`},
		{"string for integer", tool(), `{"backend":"b","port":"8080"}`, `argument "port" must be an integer, got the string "8080"`},
		{"number for boolean", tool(), `{"backend":"b","check":1}`, `argument "check" must be a boolean, got the number 1`},
		{"string for boolean", tool(), `{"backend":"b","check":"true"}`, `argument "check" must be a boolean, got the string "true"`},
		{"object for string", tool(), `{"backend":{"name":"b"}}`, `argument "backend" must be a string, got an object {"name":"b"}`},
		{"array for string", tool(), `{"backend":["b"]}`, `argument "backend" must be a string, got an array ["b"]`},
		{"null for string", tool(), `{"backend":null}`, `argument "backend" must be a string, got null`},
		{"fraction for integer", tool(), `{"backend":"b","port":80.5}`, `argument "port" must be an integer, got the number 80.5`},
		{"huge number", tool(), `{"backend":"b","port":1e400}`, `argument "port"`},
		{"beyond 2^53", tool(), `{"backend":"b","port":9007199254740993}`, `argument "port"`},
		{"negative", tool(), `{"backend":"b","port":-1}`, `argument "port" must be at least 1, got the number -1`},
		{"zero", tool(), `{"backend":"b","port":0}`, `argument "port"`},
		{"enum", tool(), `{"backend":"b","state":"DRAIN"}`, `argument "state" must be one of "ready", "drain", "maint", got the string "DRAIN"`},
		{"pattern: command injection", tool(), `{"backend":"b\nshutdown sessions server x/y"}`, `argument "backend"`},
		{"pattern: too long", tool(), `{"backend":"` + strings.Repeat("b", 65) + `"}`, `argument "backend"`},
		{"item type", tool(), `{"backend":"b","tags":["a",2]}`, `argument "tags[1]" must be a string, got the number 2`},
		{"several at once", tool(), `{"port":"x","check":"y"}`, `missing required argument "backend"`},
		{"weight integer", weightTool(), `{"weight":10}`, ""},
		{"weight percent", weightTool(), `{"weight":"50%"}`, ""},
		{"weight numeric string", weightTool(), `{"weight":"10"}`, `argument "weight" must be an integer, or a string matching ^[0-9]{1,3}%$, got the string "10"`},
		{"weight boolean", weightTool(), `{"weight":true}`, `argument "weight" must be an integer`},
		{"weight unknown argument", weightTool(), `{"weight":1,"wieght":2}`, `unknown argument "wieght"`},
		{"long value shortened", tool(), `{"backend":"b","port":"` + strings.Repeat("9", 500) + `"}`, `…`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args any
			if tc.args != "" {
				args = json.RawMessage(tc.args)
			}
			err := checkCall(tc.tool, args)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused valid arguments: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was run") {
				t.Fatalf("message %q lacks %q", err, tc.want)
			}
			if len(err.Error()) > 2000 {
				t.Errorf("message is %d bytes", len(err.Error()))
			}
		})
	}
	// The several-at-once case names each wrong argument.
	err := checkCall(tool(), json.RawMessage(`{"port":"x","check":"y"}`))
	for _, w := range []string{`"port"`, `"check"`, `"backend"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q not named in %v", w, err)
		}
	}
}

func TestBrokenSchemaIsABugNotAPass(t *testing.T) {
	bad := mcp.NewToolWithRawSchema("bad", "", json.RawMessage(`{"type":"object","properties":{"x":{"type":"integr"}}}`))
	if _, err := Compile(bad); err == nil {
		t.Fatal("a schema that does not compile compiled")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "bad") {
			t.Fatalf("Bind of a schema that does not compile: %v, want a panic naming the tool", r)
		}
	}()
	Bind(bad, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
}

func TestBind(t *testing.T) {
	tl := tool()
	called := 0
	h := Bind(tl, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		called++
		return mcp.NewToolResultText("ran"), nil
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "set_server"
	req.Params.Arguments = map[string]any{"backend": "b", "port": "80"}
	res, _ := h(context.Background(), req)
	if !res.IsError || called != 0 {
		t.Fatalf("invalid call ran: %v", res)
	}
	req.Params.Arguments = map[string]any{"backend": "b", "port": 80}
	if res, _ := h(context.Background(), req); res.IsError || called != 1 {
		t.Fatalf("valid call: %v", res)
	}
}

func BenchmarkCheckSmallCall(b *testing.B) {
	for _, closed := range []bool{false, true} {
		b.Run(fmt.Sprintf("additionalProperties=%v", !closed), func(b *testing.B) {
			opts := []mcp.ToolOption{mcp.WithString("key", mcp.Required()), mcp.WithNumber("limit")}
			if closed {
				opts = append(opts, mcp.WithSchemaAdditionalProperties(false))
			}
			tool := mcp.NewTool("lookup", opts...)
			args := map[string]any{"key": "k1", "limit": 5}
			c, err := Compile(tool)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Parse(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// checkCall checks args against tool's schema as a bound handler does.
func checkCall(tool mcp.Tool, args any) error {
	c, err := Compile(tool)
	if err != nil {
		return err
	}
	_, err = c.Parse(args)
	return err
}

// TestEmptyObjectReadAsDecoded: {} (read without a decoder) is the instance
// the decoder makes of it, and the schema judges it the same way.
func TestEmptyObjectReadAsDecoded(t *testing.T) {
	for _, args := range []string{`{}`, ` {} `, "{}\n", `{ }`} {
		got, err := instance(json.RawMessage(args))
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if m, ok := got.(map[string]any); !ok || m == nil || len(m) != 0 {
			t.Fatalf("%q read as %#v, want an empty map", args, got)
		}
	}
	for _, args := range []string{`{}x`, `{}{}`, `{`, `{]`} {
		if _, err := instance(json.RawMessage(args)); err == nil {
			t.Errorf("%q was read as arguments", args)
		}
	}
	if err := checkCall(tool(), json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), `missing required argument "backend"`) {
		t.Fatalf("{} against a required argument: %v", err)
	}
	none := mcp.NewTool("show_info")
	if err := checkCall(none, json.RawMessage(`{}`)); err != nil {
		t.Fatalf("{} for a tool without arguments: %v", err)
	}
	closed := mcp.NewToolWithRawSchema("x", "", json.RawMessage(`{"type":"object","minProperties":1}`))
	if err := checkCall(closed, json.RawMessage(`{}`)); err == nil {
		t.Fatal("{} passed minProperties 1")
	}
}

// BenchmarkCheckNoArguments is the check of a call with arguments {} (a
// tool without arguments, as show_info), as they come off the wire.
func BenchmarkCheckNoArguments(b *testing.B) {
	c, err := Compile(mcp.NewTool("show_info"))
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Parse(args); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNoArgumentsJudgedOnce: the verdict on no arguments, judged when the
// schema is compiled, is the one the validator gives each call.
func TestNoArgumentsJudgedOnce(t *testing.T) {
	schemas := map[string]mcp.Tool{
		"no arguments":      mcp.NewTool("show_info"),
		"required argument": tool(),
		"minProperties":     mcp.NewToolWithRawSchema("m", "", json.RawMessage(`{"type":"object","minProperties":1}`)),
		"not an object":     mcp.NewToolWithRawSchema("n", "", json.RawMessage(`{"type":"string"}`)),
		"closed, optional":  mcp.NewTool("c", mcp.WithString("x"), mcp.WithSchemaAdditionalProperties(false)),
	}
	var nilMap map[string]any
	for name, tl := range schemas {
		c, err := Compile(tl)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range []any{nil, json.RawMessage(``), json.RawMessage(`null`), json.RawMessage(`{}`), json.RawMessage(" {}\n"), map[string]any{}, nilMap} {
			got, gotErr := c.Parse(args)
			want, wantErr := check(c.name, c.schema, args)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Errorf("%s, %#v: Parse %#v, %v; the validator %#v, %v", name, args, got, gotErr, want, wantErr)
			}
		}
	}
}
