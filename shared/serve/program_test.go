package serve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

// --help=json prints the very table --help prints, with the required and
// secret marks, for the server.json and bundle generators; nothing else.
func TestHelpJSON(t *testing.T) {
	p := serve.Program{Name: "demo", Version: "v1.2.3", Summary: "a demo", Vars: []envconfig.Var{
		{Name: "DEMO_URL", Required: true, Description: "where"},
		{Name: "DEMO_PASSWORD", Secret: true, Description: "pw"},
	}}
	for _, args := range [][]string{{"--help=json"}, {"-help=json"}} {
		var out, errOut strings.Builder
		status, done := p.HandleArgs(args, &out, &errOut)
		if !done || status != serve.ExitOK || errOut.Len() != 0 {
			t.Fatalf("%v: status %d done %v stderr %q", args, status, done, errOut.String())
		}
		var got struct {
			Name, Version, Summary string
			Variables              []envconfig.Var
		}
		if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		all := p.AllVars()
		if got.Name != "demo" || got.Version != "v1.2.3" || got.Summary != "a demo" || len(got.Variables) != len(all) {
			t.Fatalf("%v: got %+v", args, got)
		}
		for i := range all {
			if got.Variables[i] != all[i] {
				t.Errorf("variable %d = %+v, want %+v", i, got.Variables[i], all[i])
			}
		}
		if !got.Variables[0].Required || !got.Variables[1].Secret {
			t.Errorf("required/secret marks lost: %+v", got.Variables[:2])
		}
	}
	// Not flags: a bare word and a different value are usage errors.
	for _, args := range [][]string{{"help=json"}, {"--help=yaml"}} {
		var out, errOut strings.Builder
		if status, done := p.HandleArgs(args, &out, &errOut); !done || status != serve.ExitUsage || out.Len() != 0 {
			t.Errorf("%v: status %d done %v stdout %q", args, status, done, out.String())
		}
	}
}
