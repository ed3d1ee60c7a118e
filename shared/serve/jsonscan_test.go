package serve

import (
	"bytes"
	"maps"
	"testing"
)

// lines the gate's fast paths must read exactly as encoding/json does:
// plain requests and every oddity the fast paths must leave to the slow one
// (or answer the same way themselves).
var gateLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"x","arguments":{"k":"}\"{"}}}`,
	`  {"jsonrpc" : "2.0" , "id" : 7 , "method" : "ping" }  `,
	`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"\u0041","method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}`,
	`{"jsonrpc":"2.0","method":"notifications/\u0063ancelled","params":{"requestId":5}}`,
	`{"jsonrpc":"2.0","ID":2,"METHOD":"ping"}`,
	`{"jsonrpc":"2.0","id":2,"Method":"ping","method":"ping"}`,
	`{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":2,"method":"ping","params":"x"}`,
	`{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}`,
	`{"jsonrpc":"2.0","id":2,"method":5}`,
	`{"jsonrpc":"2.0","id":2,"method":null}`,
	`{"jsonrpc":"2.0","id":2,"method":""}`,
	`{"jsonrpc":"2.0","id":2,"method":"p\u0069ng"}`,
	`{"jsonrpc":"2.0","id":2,"m\u0065thod":"ping"}`,
	`{"jsonrpc":"2.0","id":2,"méthod":"ping"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":[1,"]"],"method":"ping"}`,
	`{"jsonrpc":"2.0","id":3,"method":"callTool","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"call\u0054ool","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":3,"Method":"callTool","params":{"name":"x"}}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"id":9,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"} {"id":2}`,
	`{"jsonrpc":"2.0","id":01,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":tru,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":2,"result":{}}`,
	`{}`,
	`{"id":1}`,
	`[{"id":1,"method":"ping"}]`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\tng\"}",
}

// TestAdmitFastAgrees proves the fast path of admit changes nothing: for
// every line, the full admit and encoding/json's admitSlow return the same
// line and leave the same requests awaited (cancellations included).
func TestAdmitFastAgrees(t *testing.T) {
	for _, aliases := range []map[string]string{nil, {"callTool": "tools/call"}} {
		for _, l := range gateLines {
			checkAdmit(t, aliases, []byte(l))
		}
	}
}

func checkAdmit(t *testing.T, aliases map[string]string, line []byte) {
	t.Helper()
	newGate := func() *stdioGate {
		return &stdioGate{aliases: aliases, pending: map[string]int{"5": 1, `"r"`: 1}, answers: make(chan struct{}, 1)}
	}
	fast, slow := newGate(), newGate()
	in := append(bytes.Clone(line), '\n')
	gotLine, gotAwait, _ := fast.admit(bytes.Clone(in))
	wantLine, wantAwait := slow.admitSlow(bytes.Clone(in), bytes.TrimSpace(bytes.Clone(in)))
	if gotAwait != wantAwait {
		t.Errorf("aliases %v, line %s: admit awaits %q, encoding/json %q", aliases, line, gotAwait, wantAwait)
	}
	if !bytes.Equal(gotLine, wantLine) {
		t.Errorf("aliases %v, line %s: admit passed on %q, encoding/json %q", aliases, line, gotLine, wantLine)
	}
	if !maps.Equal(fast.pending, slow.pending) {
		t.Errorf("aliases %v, line %s: admit awaits %v, encoding/json %v", aliases, line, fast.pending, slow.pending)
	}
}

// TestResponseIDFastAgrees proves the fast reading of answers finds the id
// encoding/json's decoder finds, and refuses what it refuses.
func TestResponseIDFastAgrees(t *testing.T) {
	outs := append([]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","result":{"a":"}"},"id":4}`,
		`{"id":1,"id":2,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{}} trailing`,
		`{"jsonrpc":"2.0","i\u0064":1,"result":{}}`,
		`{"jsonrpc":tru,"id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id": 9 ,"result":{}}`,
	}, gateLines...)
	for _, o := range outs {
		checkResponseID(t, []byte(o))
	}
}

func checkResponseID(t *testing.T, msg []byte) {
	t.Helper()
	gotID, gotOK := responseID(msg)
	wantID, wantOK := responseIDSlow(msg)
	if gotOK != wantOK || !bytes.Equal(gotID, wantID) {
		t.Errorf("%s: responseID = %s, %v; encoding/json %s, %v", msg, gotID, gotOK, wantID, wantOK)
	}
}

func FuzzAdmitFastAgrees(f *testing.F) {
	for _, l := range gateLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // the gate splits lines first
		}
		checkAdmit(t, nil, line)
		checkAdmit(t, map[string]string{"callTool": "tools/call"}, line)
	})
}

func FuzzResponseIDFastAgrees(f *testing.F) {
	for _, l := range gateLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, msg []byte) { checkResponseID(t, msg) })
}
