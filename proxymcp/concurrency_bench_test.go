package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
)

// BenchmarkShowInfoConcurrentHTTP is issue 31's second target: 50 callers,
// each with its own streamable HTTP session to one proxymcp, make 20
// show_info calls each, all at once; proxymcp keeps at most 4 runtime API
// connections (PROXY_RUNTIME_MAX_CONNS=4). Beside it, in the same process
// and run, the floor: a raw runtime API client capped at 4 sockets, with
// 50 goroutines × 20 "show info". One op is one round of 1,000 calls;
// p50_ms/p99_ms are over every call of every round, and x_floor_p50 is the
// ratio of the medians (target: p99 <= 50 ms, x_floor_p50 <= 3).
//
// The callers run in the benchmark's process, on the same 2 cores as the
// server, so their own cost is part of every latency. The floor's client is
// a few syscalls per call; to measure the server and not the client, the
// "lean" sub-benchmark's callers are plain HTTP clients (one POST of a
// ready-made JSON-RPC request per call, the answer read whole and checked),
// and "go-sdk" is the official Go SDK's client with its listening stream,
// as an application would use. "lean_ping" sends MCP's ping instead of the
// tool call: the streamable HTTP transport's own cost, no tool, no HAProxy. Both report the CPU each call costs the
// server process (server_cpu_us/call, from /proc) and the benchmark
// process (client_cpu_us/call, getrusage), and the most runtime API
// connections HAProxy itself saw open at once from proxymcp
// (haproxy_conns_max, its "show sess" on the operator socket, sampled
// every 5 ms; target <= 4); lean callers also report the bytes of an
// answer (answer_bytes/call).
//
//	go test -run XXX -bench BenchmarkShowInfoConcurrentHTTP -benchtime 5x ./proxymcp/
//
// PROXYMCP_BENCH_BIN runs another build (an older commit) for before/after.
func BenchmarkShowInfoConcurrentHTTP(b *testing.B) {
	const callers, calls = 50, 20
	bin := os.Getenv("PROXYMCP_BENCH_BIN")
	if bin == "" {
		bin = e2e.Build(b, ".")
	}
	h := haproxytest.Run(b, haproxytest.Options{})

	// The floor, measured first and in the same run.
	raw := &runtimeapi.Client{Network: "unix", Address: h.Socket, Timeout: 30 * time.Second, MaxConns: 4}
	defer raw.Close()
	var floor []time.Duration
	for range 3 {
		d, err := concurrentRound(callers, calls, func(ctx context.Context, _ int) error { _, err := raw.Execute(ctx, "show info"); return err })
		if err != nil {
			b.Fatal(err)
		}
		floor = append(floor, d...)
	}
	raw.Close()

	env := append(haproxyEnv(h, "unix"), "PROXY_RUNTIME_MAX_CONNS=4", "LOG_LEVEL=error",
		// 50 callers of one identity: each session holds a request and a
		// listening stream open.
		"MCP_MAX_INFLIGHT_PER_IDENTITY=200", "MCP_MAX_SESSIONS_PER_IDENTITY=1000")
	var mcpURL string
	serverCPU := func() time.Duration { return 0 }
	if os.Getenv("PROXYMCP_BENCH_INPROCESS") == "1" {
		// For -cpuprofile: the server runs in this process (its CPU is then
		// in client_cpu_us/call, and server_cpu_us/call is 0).
		mcpURL = startInProcessHTTP(b, env)
	} else {
		srv := e2e.StartHTTP(b, bin, env)
		mcpURL = srv.MCPURL()
		serverCPU = func() time.Duration { return procCPU(b, srv.Cmd.Process.Pid) }
	}
	obs := &runtimeapi.Client{Network: "unix", Address: h.OperatorSocket, Timeout: 5 * time.Second}
	// answerBytes counts the bytes of the lean callers' answers: what each
	// call writes, and each caller reads and checks.
	var answerBytes atomic.Int64

	measure := func(b *testing.B, call func(ctx context.Context, c int) error) {
		if _, err := concurrentRound(callers, calls, call); err != nil { // warm up: sessions, pool, version
			b.Fatal(err)
		}
		conns := watchCLISessions(obs)
		answerBytes.Store(0)
		srvCPU0, cliCPU0 := serverCPU(), selfCPU()
		var got []time.Duration
		b.ResetTimer()
		for range b.N {
			d, err := concurrentRound(callers, calls, call)
			if err != nil {
				b.Fatal(err)
			}
			got = append(got, d...)
		}
		b.StopTimer()
		srvCPU, cliCPU := serverCPU()-srvCPU0, selfCPU()-cliCPU0
		maxConns := conns()
		n := float64(len(got))
		b.ReportMetric(ms(pct(got, 0.5)), "p50_ms")
		b.ReportMetric(ms(pct(got, 0.99)), "p99_ms")
		b.ReportMetric(ms(pct(floor, 0.5)), "floor_p50_ms")
		b.ReportMetric(ms(pct(floor, 0.99)), "floor_p99_ms")
		b.ReportMetric(float64(pct(got, 0.5))/float64(pct(floor, 0.5)), "x_floor_p50")
		b.ReportMetric(float64(srvCPU.Microseconds())/n, "server_cpu_us/call")
		b.ReportMetric(float64(cliCPU.Microseconds())/n, "client_cpu_us/call")
		b.ReportMetric(float64(maxConns), "haproxy_conns_max")
		if n := answerBytes.Load(); n > 0 {
			b.ReportMetric(float64(n)/float64(len(got)), "answer_bytes/call")
		}
		if maxConns > 4 {
			b.Errorf("HAProxy saw %d runtime API connections from proxymcp at once; PROXY_RUNTIME_MAX_CONNS=4", maxConns)
		}
	}

	// lean callers: method "tools/call" (show_info), or "ping", MCP's own
	// round trip with no tool and no HAProxy behind it: what the transport
	// alone costs the same 50 callers.
	lean := func(b *testing.B, method string, wire bool) {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: callers, MaxConnsPerHost: callers}}
		defer hc.CloseIdleConnections()
		ids := make([]string, callers)
		for i := range ids {
			ids[i] = rawmcp.Connect(b, mcpURL, hc, "bench").ID
		}
		defer func() { // end the sessions: the next sub-benchmark opens its own
			for _, id := range ids {
				req, _ := http.NewRequest(http.MethodDelete, mcpURL, nil)
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("MCP-Protocol-Version", rawmcp.ProtocolVersion)
				if res, err := hc.Do(req); err == nil {
					res.Body.Close()
				}
			}
		}()
		params, want := `{"name":"show_info","arguments":{}}`, `"structuredContent"`
		if method == "ping" {
			params, want = `{}`, `"result":{}`
		}
		var seq atomic.Int64
		check := func(status int, ans []byte) error {
			answerBytes.Add(int64(len(ans)))
			if status != http.StatusOK || !bytes.Contains(ans, []byte(want)) || bytes.Contains(ans, []byte(`"isError":true`)) {
				return fmt.Errorf("%s: HTTP %d: %.300s", method, status, ans)
			}
			return nil
		}
		body := func() string {
			return `{"jsonrpc":"2.0","id":` + strconv.FormatInt(seq.Add(1), 10) + `,"method":"` + method + `","params":` + params + `}`
		}
		call := func(ctx context.Context, c int) error {
			req, _ := http.NewRequestWithContext(ctx, "POST", mcpURL, strings.NewReader(body()))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", rawmcp.ProtocolVersion)
			req.Header.Set("Mcp-Session-Id", ids[c])
			res, err := hc.Do(req)
			if err != nil {
				return err
			}
			ans, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				return err
			}
			return check(res.StatusCode, ans)
		}
		if wire {
			conns := make([]*wireConn, callers)
			for i := range conns {
				conns[i] = dialWire(b, mcpURL, ids[i])
			}
			call = func(_ context.Context, c int) error {
				status, ans, err := conns[c].post(body())
				if err != nil {
					return err
				}
				return check(status, ans)
			}
		}
		measure(b, call)
	}
	b.Run("lean", func(b *testing.B) { lean(b, "tools/call", false) })
	b.Run("lean_ping", func(b *testing.B) { lean(b, "ping", false) })
	b.Run("wire", func(b *testing.B) { lean(b, "tools/call", true) })
	b.Run("wire_ping", func(b *testing.B) { lean(b, "ping", true) })

	b.Run("go-sdk", func(b *testing.B) {
		sessions := make([]*mcp.ClientSession, callers)
		for i := range sessions {
			sessions[i] = e2e.Connect(b, mcpURL, nil)
		}
		call := func(ctx context.Context, c int) error {
			res, err := sessions[c].CallTool(ctx, &mcp.CallToolParams{Name: "show_info", Arguments: map[string]any{}})
			if err == nil && res.IsError {
				return fmt.Errorf("show_info: %s", e2e.Text(res))
			}
			return err
		}
		measure(b, call)
	})
}

// concurrentRound runs callers goroutines of calls calls each, all started
// at once, and returns every call's latency.
func concurrentRound(callers, calls int, call func(ctx context.Context, caller int) error) ([]time.Duration, error) {
	lat := make([][]time.Duration, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range calls {
				t0 := time.Now()
				if err := call(context.Background(), c); err != nil {
					errs[c] = err
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	close(start)
	wg.Wait()
	var all []time.Duration
	for c := range callers {
		if errs[c] != nil {
			return nil, errs[c]
		}
		all = append(all, lat[c]...)
	}
	return all, nil
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// procCPU is the user+system CPU time a process has used (/proc/PID/stat).
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count from after it.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)           // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64)           // field 15
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}

// selfCPU is the user+system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchCLISessions samples HAProxy's runtime API sessions every 5 ms
// until the returned stop, which gives the most seen at once, not
// counting the observer's own (on the operator socket).
func watchCLISessions(obs *runtimeapi.Client) (stop func() int) {
	ctx, cancel := context.WithCancel(context.Background())
	var most atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			out, err := obs.Execute(ctx, "show sess")
			if err == nil {
				n := int64(-1) // the observer
				for _, line := range strings.Split(out, "\n") {
					if strings.Contains(line, " fe=GLOBAL ") {
						n++
					}
				}
				if n > most.Load() {
					most.Store(n)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() int {
		cancel()
		<-done
		return int(most.Load())
	}
}

// startInProcessHTTP runs proxymcp's run in this process on streamable HTTP
// and returns its MCP endpoint.
func startInProcessHTTP(b *testing.B, env []string) string {
	port := e2e.FreePort(b)
	vars := map[string]string{"MCP_TRANSPORT": "http", "MCP_HOST": "127.0.0.1", "MCP_PORT": strconv.Itoa(port)}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, nil, func(k string) string { return vars[k] }, strings.NewReader(""), io.Discard, io.Discard)
	}()
	b.Cleanup(func() { cancel(); <-done })
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base + "/mcp"
			}
		}
		select {
		case code := <-done:
			b.Fatalf("proxymcp exited (%d) before serving HTTP", code)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatal("proxymcp did not answer /healthz within 30s")
		}
	}
}

// wireConn is one caller's kept-alive HTTP/1.1 connection to the server,
// written and read directly: a request is one write of ready-made bytes,
// its answer a buffered read. Its CPU per call is a few syscalls and the
// parse of one answer, near the floor's client, so that what 50 callers
// on the server's own 2 cores cost themselves weighs on the latencies
// about as little as it does on the floor's.
type wireConn struct {
	conn   net.Conn
	br     *bufio.Reader
	header string // the request line and headers, up to Content-Length
}

func dialWire(b *testing.B, mcpURL, session string) *wireConn {
	u, err := url.Parse(mcpURL)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return &wireConn{conn: conn, br: bufio.NewReader(conn),
		header: "POST " + u.Path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\n" +
			"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: " + rawmcp.ProtocolVersion + "\r\n" +
			"Mcp-Session-Id: " + session + "\r\nContent-Length: "}
}

// post sends one JSON-RPC message and returns the answer's status and body.
func (w *wireConn) post(body string) (int, []byte, error) {
	if _, err := io.WriteString(w.conn, w.header+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
		return 0, nil, err
	}
	res, err := http.ReadResponse(w.br, nil)
	if err != nil {
		return 0, nil, err
	}
	ans, err := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, ans, err
}
