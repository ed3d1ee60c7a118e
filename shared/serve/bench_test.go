package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/otlptest"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

// BenchmarkReadToolPipeline is the per-call cost of a read tool through the
// whole shared pipeline as every server installs it — argument validation,
// classification, metrics, tracing with an OTLP exporter configured (to a
// live receiver; spans batched), audit off — without a transport: the
// JSON-RPC message goes straight to mcp-go's dispatcher. tracing=off is the
// same without OTEL_EXPORTER_OTLP_ENDPOINT.
func BenchmarkReadToolPipeline(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("tracing=%v", traced), func(b *testing.B) {
			s := serve.NewServer("bench", "v0")
			p := serve.Program{Name: "bench", Version: "v0"}
			calls, err := p.Pipeline(s, serve.Config{Transport: "stdio", Calls: toolcall.Config{Audit: audit.Config{Dest: "off"}}}, io.Discard, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer calls.Close()
			calls.Read(mcp.NewTool("lookup", mcp.WithString("key", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
				func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText(req.GetString("key", "")), nil
				})
			if traced {
				rcv := otlptest.Start(b)
				if err := s.Tracing.Start(context.Background(), traces.Config{Endpoint: rcv.URL + "/v1/traces", Protocol: traces.HTTPProtobuf, Sampler: "parentbased_always_on", SamplerArg: 1}, "bench", "v0"); err != nil {
					b.Fatal(err)
				}
				defer s.Tracing.Shutdown(context.Background())
			}
			ctx := context.Background()
			init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
			s.HandleMessage(ctx, init)
			msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"k1"}}}`)
			first, _ := json.Marshal(s.HandleMessage(ctx, msg))
			if res := string(first); !strings.Contains(res, `"text":"k1"`) || strings.Contains(res, `"isError":true`) {
				b.Fatalf("the call failed: %s", res)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.HandleMessage(ctx, msg)
			}
		})
	}
}

// BenchmarkStdioPing is the end-to-end cost of the cheapest call over stdio:
// a built server (echoserver, the smallest on package serve) is spawned, and
// each ping is written to its stdin and timed until its answer is read from
// its stdout, one at a time. It reports the median round trip (µs), with
// metrics always on and tracing to a live OTLP receiver or off. Machine load
// shows in the figure: compare runs made side by side.
//
// PING_BIN=/path/to/server measures another stdio server the same way (an
// older build, a peer: internal/bareping (bare mcp-go), internal/sdkping
// (the official Go SDK), testdata/tsping.sh (the official TypeScript SDK)), side by
// side with this one; PING_ENV adds space-separated NAME=value settings the
// server needs (PING_ENV=STREAM_BROKERS=127.0.0.1:1 for streammcp).
func BenchmarkStdioPing(b *testing.B) {
	bin := os.Getenv("PING_BIN")
	if bin == "" {
		bin = e2e.Build(b, "internal/echoserver")
	}
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("tracing=%v", traced), func(b *testing.B) {
			cmd := exec.Command(bin)
			cmd.Env = append([]string{"MCP_AUDIT_LOG=off", "LOG_LEVEL=warn"}, strings.Fields(os.Getenv("PING_ENV"))...)
			if traced {
				rcv := otlptest.Start(b)
				cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
			}
			in, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			outPipe, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { in.Close(); cmd.Wait() }()
			out := bufio.NewReader(outPipe)
			roundTrip := func(line string) string {
				if _, err := io.WriteString(in, line+"\n"); err != nil {
					b.Fatal(err)
				}
				resp, err := out.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				return resp
			}
			roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
			io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			for i := range 200 { // warm up
				roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 1_000_000+i))
			}
			times := make([]time.Duration, 0, b.N)
			i := 0
			for b.Loop() {
				start := time.Now()
				resp := roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
				times = append(times, time.Since(start))
				if !strings.Contains(resp, `"result"`) {
					b.Fatalf("ping answered %s", resp)
				}
				i++
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "µs-median")
		})
	}
}
