package mcpserver

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/argschema/argschematest"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

// TestWronglyTypedArguments calls every tool, through the server as
// proxymcp's main builds it (serve.NewServer), with wrongly typed values
// for every argument, generated from each tool's own input schema: a
// string for an integer ("8080" for port), a number for a boolean, an
// object, array or null for a string, and so on. Each call must be an
// isError naming the argument, open no connection to HAProxy, and leave
// its servers, maps and ACLs as they were.
func TestWronglyTypedArguments(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{})
	relay := newRelay(t, h.RuntimeTCP)
	rt := &runtimeapi.Client{Network: "tcp4", Address: relay.l.Addr().String(), Timeout: 5 * time.Second}
	s := serve.NewServer("proxymcp-test", "test")
	New(one(haproxy.New(rt, statsClient(h))), Options{}).Register(noApproval(s.MCPServer))
	c, err := client.NewInProcessClient(s.MCPServer)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h, "be_app", "app3", "DOWN")
	waitStatus(t, h, "be_app", "app1", "UP")
	before := writeSnapshot(t, h)
	maps := exec(t, h, "show map "+h.MapFile) + exec(t, h, "show acl "+h.ACLFile)
	relay.n.Store(0)

	sort.Slice(list.Tools, func(i, j int) bool { return list.Tools[i].Name < list.Tools[j].Name })
	calls, covered := 0, 0
	for _, tool := range list.Tools {
		base := map[string]any{}
		for arg := range tool.InputSchema.Properties {
			if v := valid(h, tool.Name, arg); v != nil {
				base[arg] = v
			}
		}
		cases := argschematest.Cases(tool, base)
		args := map[string]bool{}
		for _, tc := range cases {
			args[tc.Arg] = true
			req := mcp.CallToolRequest{}
			req.Params.Name = tool.Name
			req.Params.Arguments = tc.Args
			res, err := c.CallTool(ctx, req)
			if err != nil {
				t.Fatalf("%s %s=%#v: protocol error %v", tool.Name, tc.Arg, tc.Value, err)
			}
			calls++
			if msg := text(res); !res.IsError || !strings.Contains(msg, `argument "`+tc.Arg+`"`) {
				t.Errorf("%s %s=%#v: isError=%v %.300s", tool.Name, tc.Arg, tc.Value, res.IsError, msg)
			}
		}
		// Every argument with a declared type is covered.
		for arg := range tool.InputSchema.Properties {
			if !args[arg] {
				t.Errorf("%s: no wrongly typed case for argument %q", tool.Name, arg)
			}
		}
		covered += len(args)
	}
	if n := relay.n.Load(); n != 0 {
		t.Errorf("%d connections reached HAProxy during %d wrongly typed calls", n, calls)
	}
	if after := writeSnapshot(t, h); after != before {
		t.Errorf("HAProxy state changed:\n--- before\n%s\n--- after\n%s", before, after)
	}
	if after := exec(t, h, "show map "+h.MapFile) + exec(t, h, "show acl "+h.ACLFile); after != maps {
		t.Errorf("map or ACL changed:\n--- before\n%s\n--- after\n%s", maps, after)
	}
	if calls < 100 {
		t.Fatalf("only %d calls generated", calls)
	}
	t.Logf("%d wrongly typed calls over %d arguments of %d tools", calls, covered, len(list.Tools))
}
