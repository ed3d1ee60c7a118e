package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/otlptest"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/traces"
)

// BenchmarkStdioPingInProcess is BenchmarkStdioPing without the process
// boundary: Run's stdio transport on pipes, for profiling the shared path
// (go test -bench StdioPingInProcess -cpuprofile cpu.out).
func BenchmarkStdioPingInProcess(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("tracing=%v", traced), func(b *testing.B) { benchStdioPingInProcess(b, traced) })
	}
}

func benchStdioPingInProcess(b *testing.B, traced bool) {
	s := serve.NewServer("bench", "v0")
	cfg := serve.Config{Transport: "stdio", ShutdownTimeout: time.Second}
	if traced {
		cfg.Tracing = traces.Config{Endpoint: otlptest.Start(b).URL + "/v1/traces", Protocol: traces.HTTPProtobuf, Sampler: "parentbased_always_on", SamplerArg: 1}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(context.Background(), serve.Program{Name: "bench"}, s, cfg, serve.Options{Stdin: inR, Stdout: outW})
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	rt := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
		if _, err := out.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
	rt(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rt(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
		i++
	}
	inW.Close()
	<-done
}
