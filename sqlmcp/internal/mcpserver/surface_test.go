package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/toolcall/toolcalltest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/mcpserver"
)

// The tools as registered here are the tools the built server lists
// (main_test.go records them in the surface goldens over stdio and HTTP);
// this compares them with those goldens by JSON meaning, so a change in how
// a tool is declared cannot change what clients see.
func TestToolsEqualTheSurfaceGoldens(t *testing.T) {
	for golden, opts := range map[string]mcpserver.Options{
		"../../testdata/surface.golden.json":        {},
		"../../testdata/surface_writes.golden.json": {AllowWrites: true},
	} {
		t.Run(golden, func(t *testing.T) {
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, opts, nil)
			list, err := h.c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(list)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range toolcalltest.ToolsDiff(want, got) {
				t.Error(d)
			}
		})
	}
}
