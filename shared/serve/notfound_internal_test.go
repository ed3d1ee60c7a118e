package serve

import "testing"

// resourceRead passes over a message only when its method is plainly
// another; every other shape is decoded by encoding/json, so the answer is
// encoding/json's.
func TestResourceReadMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		uri  string
		read bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ui://x"}}`, "ui://x", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"uri":"ui://x"}}`, "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"resources\/read","params":{"uri":"ui://esc"}}`, "ui://esc", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"resources/read","params":{"uri":"ui://last"}}`, "ui://last", true},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","method":"tools/call","params":{"uri":"ui://x"}}`, "", false},
		{`{"jsonrpc":"2.0","id":1,"METHOD":"resources/read","params":{"uri":"ui://upper"}}`, "ui://upper", true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"resources/read","params":{"uri":"ui://case"}}`, "ui://case", true},
		{`{"jsonrpc":"2.0","id":1,"Method":"resources/read","method":"ping","params":{"uri":"ui://x"}}`, "", false},
		{`{"jsonrpc":"2.0","method":"resources/read","params":{"uri":"ui://x"}}`, "", false}, // a notification
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "", false},
		{`[{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ui://x"}}]`, "", false},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, "", false},
		{`not json`, "", false},
	} {
		uri, read := resourceRead([]byte(tc.msg))
		if uri != tc.uri || read != tc.read {
			t.Errorf("%s: %q %v, want %q %v", tc.msg, uri, read, tc.uri, tc.read)
		}
	}
}
