package jsonscan_test

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/jsonscan"
)

// TestMember: the last member of the name wins, matched in any case only
// when folding, as encoding/json fills a struct (fold) or a map (exact).
func TestMember(t *testing.T) {
	for _, tc := range []struct {
		msg         string
		exact, fold string // "" for none
	}{
		{`{"method":"a"}`, `"a"`, `"a"`},
		{`{"method":"a","method":"b"}`, `"b"`, `"b"`},
		{`{"method":"a","METHOD":"b"}`, `"a"`, `"b"`},
		{`{"Method":"a","method":"b","mEthod":"c"}`, `"b"`, `"c"`},
		{`{"Method":"a"}`, "", `"a"`},
		{`{"id":1,"params":{"method":"x"}}`, "", ""},
		{`{"methods":"a"}`, "", ""},
	} {
		var f [jsonscan.MaxFields]jsonscan.Field
		n, ok := jsonscan.TopFields([]byte(tc.msg), &f)
		if !ok {
			t.Fatalf("%s: not scanned", tc.msg)
		}
		if got := string(jsonscan.Member(f[:n], "method", false)); got != tc.exact {
			t.Errorf("%s exactly: %q, want %q", tc.msg, got, tc.exact)
		}
		if got := string(jsonscan.Member(f[:n], "method", true)); got != tc.fold {
			t.Errorf("%s in any case: %q, want %q", tc.msg, got, tc.fold)
		}
	}
}
