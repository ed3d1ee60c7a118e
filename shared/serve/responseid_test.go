package serve

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResponseID: the stdout tap recognises responses by their id without
// parsing their result, and never takes a request or notification (which
// carry a method) or a broken line for an answer.
func TestResponseID(t *testing.T) {
	big := `"` + strings.Repeat("x", 1<<20) + `"`
	for _, tc := range []struct {
		msg string
		id  string // "" for not a response
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "1"},
		{`{"jsonrpc":"2.0","id":"a b","result":` + big + `}`, `"a b"`},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"}}`, "7"},
		{`{"result":{"k":[1,2,{"id":9}]},"id":3,"jsonrpc":"2.0"}`, "3"},
		{` { "id" : 4 , "result" : null } `, "4"},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, "null"},
		{`{"jsonrpc":"2.0","id":5}`, "5"},
		{`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{}}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}`, ""},
		{`{"jsonrpc":"2.0","result":{}}`, ""},
		{`{"jsonrpc":"2.0","result":{},"id":`, ""},
		{`{"id":1,"result":{}`, "1"}, // stops at the result: the id is known
		{`not json`, ""},
		{`[{"id":1,"result":{}}]`, ""},
		{``, ""},
	} {
		id, ok := responseID([]byte(tc.msg))
		if ok != (tc.id != "") || string(id) != tc.id {
			t.Errorf("%.60s: got %q %v, want %q", tc.msg, id, ok, tc.id)
		}
	}
}

// The fast path of normalizeID gives exactly what decoding and encoding
// gives, for every spelling it accepts, and leaves the rest to them.
func TestNormalizeIDFastPathAgrees(t *testing.T) {
	for _, raw := range []string{`1`, `0`, `-7`, `123456789012345`, `1234567890123456`, `01`, `-0`, `1.0`, `1e3`, ` 1`,
		`"a"`, `""`, `"a b-c_9"`, `"\u0041"`, `"a\"b"`, `"<x>"`, `"é"`, `"a&b"`, `"tab\t"`, `null`, `true`} {
		slow := func() string {
			var v any
			if json.Unmarshal([]byte(raw), &v) != nil {
				return raw
			}
			b, _ := json.Marshal(v)
			return string(b)
		}()
		if got := normalizeID(json.RawMessage(raw)); got != slow {
			t.Errorf("normalizeID(%s) = %s, decoding and encoding gives %s", raw, got, slow)
		}
	}
}
