package tasks

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestScanAgrees holds Wrap's shortcuts to encoding/json: the method the
// scanner tells is the one a struct decoding reads, and the single
// decoding of a tools/call gives modernCall and call exactly as decoding
// each does.
func TestScanAgrees(t *testing.T) {
	for _, tc := range hostileBodies {
		checkScan(t, []byte(tc.body))
	}
}

func FuzzScanAgrees(f *testing.F) {
	for _, tc := range hostileBodies {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(checkScan)
}

func checkScan(t *testing.T, body []byte) {
	t.Helper()
	e := scanEnvelope(body)
	var m struct{ Method string }
	if e.known && json.Unmarshal(body, &m) == nil && m.Method != e.method {
		t.Errorf("%s: scanned method %q, encoding/json %q", body, e.method, m.Method)
	}
	mc, mok, c, cok := decodeCall(body, e)
	var wmc modernCall
	var wc call
	wmok, wcok := json.Unmarshal(body, &wmc) == nil, json.Unmarshal(body, &wc) == nil
	if mok != wmok || (mok && !reflect.DeepEqual(mc, wmc)) {
		t.Errorf("%s: modernCall %+v %v, encoding/json %+v %v", body, mc, mok, wmc, wmok)
	}
	if wcok && wc.Method == "tools/call" || cok {
		if cok != wcok || !reflect.DeepEqual(c, wc) {
			t.Errorf("%s: call %+v %v, encoding/json %+v %v", body, c, cok, wc, wcok)
		}
	}
}
