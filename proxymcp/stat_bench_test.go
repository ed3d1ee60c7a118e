package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// BenchmarkShowStatEndToEnd measures show_stat on a HAProxy with 1,000
// servers the way an assistant meets it: the proxymcp binary started over
// stdio, called through the official Go SDK client (request, HAProxy round
// trip, parsing, encoding, the pipe, and the client decoding the result),
// every row returned; and (stdio_last_byte) with a bare client that stops
// at the answer's last byte, issue 31's measure. Beside it, on the same
// HAProxy, the floors: "show stat" through socat (one process per call, as
// an operator would) and over a raw Unix socket connection.
//
//	go test -run XXX -bench BenchmarkShowStatEndToEnd -benchtime 200x ./proxymcp/
//
// ns/op is the mean; the p50_ms metric is the median of the same calls.
// PROXYMCP_BENCH_BIN runs another build instead (an older commit, to
// measure before and after on the same machine and load); one without the
// fields argument fails the all_fields case, and on one whose default is
// the objects format (before the table became the default) the cases
// without format measure objects.
func BenchmarkShowStatEndToEnd(b *testing.B) {
	bin := os.Getenv("PROXYMCP_BENCH_BIN")
	if bin == "" {
		bin = e2e.Build(b, ".")
	}
	h := haproxytest.Run(b, haproxytest.Options{BigServers: 1000})
	cs := e2e.Stdio(b, bin, haproxyEnv(h, "unix"))
	rows := countRows(b, h)
	// The floors each case is reported against, measured in this run:
	// HAProxy's CSV bytes, and the median "show stat" through socat.
	csv, err := rawShowStat(h.Socket)
	if err != nil {
		b.Fatal(err)
	}
	socatP50 := socatMedian(b, h.Socket, 31)

	for _, v := range []struct {
		name string
		args map[string]any
	}{
		{"mcp_stdio/default_fields", map[string]any{}}, // the default: the table format
		{"mcp_stdio/all_fields", map[string]any{"fields": []any{"all"}}},
		{"mcp_stdio/default_fields_objects", map[string]any{"format": "objects"}},
		{"mcp_stdio/all_fields_objects", map[string]any{"fields": []any{"all"}, "format": "objects"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			ctx := context.Background()
			var size int
			checked := false
			p50 := timed(b, func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "show_stat", Arguments: v.args})
				if err == nil && res.IsError && v.args["format"] != nil && strings.Contains(e2e.Text(res), "format") {
					b.Skip("this build has no format argument (an older commit)")
				}
				if err != nil || res.IsError {
					b.Fatalf("show_stat: %v %s", err, e2e.Text(res))
				}
				if checked {
					return
				}
				// Checked on the first (untimed) call only: re-encoding the
				// answer is this benchmark's cost, not the server's.
				var out struct {
					Count int `json:"count"`
				}
				raw, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(raw, &out); err != nil || out.Count != rows {
					b.Fatalf("show_stat returned %d rows, HAProxy has %d (%v)", out.Count, rows, err)
				}
				size = len(raw)
				checked = true
			})
			b.ReportMetric(float64(size), "structured_bytes")
			// Issue 31's targets: every cell in <= 1.5x the CSV's bytes
			// (the default call, all fields), time to last byte <= 3x socat.
			b.ReportMetric(float64(size)/float64(len(csv)), "x_csv_bytes")
			if socatP50 > 0 {
				b.ReportMetric(float64(p50)/float64(socatP50), "x_socat_p50")
			}
		})
	}

	// Time to last byte, as issue 31 states the target: a bare stdio
	// client writes the request line and reads the answer line to its
	// last byte, without decoding it (the go-sdk cases above also pay the
	// client's decoding, in this process). The answer is decoded and
	// checked once, outside the timing. server_cpu_ms is the server
	// process's CPU per call (/proc).
	for _, v := range []struct {
		name string
		args string
	}{
		{"stdio_last_byte/default_fields", `{}`},
		{"stdio_last_byte/all_fields", `{"fields":["all"]}`},
		{"stdio_last_byte/default_fields_objects", `{"format":"objects"}`},
		{"stdio_last_byte/all_fields_objects", `{"fields":["all"],"format":"objects"}`},
	} {
		b.Run(v.name, func(b *testing.B) {
			sc := startRawStdio(b, bin, haproxyEnv(h, "unix"))
			line := sc.call(b, "tools/call", `{"name":"show_stat","arguments":`+v.args+`}`)
			var ans struct {
				Result struct {
					IsError           bool `json:"isError"`
					StructuredContent struct {
						Count int `json:"count"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal(line, &ans); err != nil || ans.Result.IsError || ans.Result.StructuredContent.Count != rows {
				if strings.Contains(string(line), "format") && strings.Contains(v.args, "format") {
					b.Skip("this build has no format argument (an older commit)")
				}
				b.Fatalf("show_stat: %v %.300s", err, line)
			}
			cpu0 := procCPU(b, sc.cmd.Process.Pid)
			var size int
			p50 := timed(b, func() {
				size = len(sc.call(b, "tools/call", `{"name":"show_stat","arguments":`+v.args+`}`))
			})
			b.ReportMetric(float64((procCPU(b, sc.cmd.Process.Pid)-cpu0).Microseconds())/1000/float64(b.N+1), "server_cpu_ms")
			b.ReportMetric(float64(size), "answer_bytes")
			if socatP50 > 0 {
				b.ReportMetric(float64(p50)/float64(socatP50), "x_socat_p50")
			}
		})
	}

	b.Run("socat", func(b *testing.B) {
		if _, err := exec.LookPath("socat"); err != nil {
			b.Skip("socat is not installed")
		}
		timed(b, func() {
			cmd := exec.Command("socat", "stdio", "unix-connect:"+h.Socket)
			cmd.Stdin = strings.NewReader("show stat\n")
			out, err := cmd.Output()
			if err != nil || !strings.HasPrefix(string(out), "# pxname") {
				b.Fatalf("socat: %v", err)
			}
		})
	})

	b.Run("raw_socket", func(b *testing.B) {
		timed(b, func() {
			if _, err := rawShowStat(h.Socket); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// timed runs f b.N times and reports the median call as p50_ms, and the
// CPU time this process spent per call as cpu_ms (user + system; on a
// loaded machine it moves far less than wall time; it leaves out child
// processes: the stdio server and socat).
func timed(b *testing.B, f func()) time.Duration {
	b.Helper()
	f() // warm up: connections, version detection, page cache
	d := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		f()
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(d).Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu_ms")
	return median(d)
}

// socatMedian is the median of n "show stat" calls through socat (one
// process per call, as an operator would run it); 0 without socat.
func socatMedian(b *testing.B, socket string, n int) time.Duration {
	b.Helper()
	if _, err := exec.LookPath("socat"); err != nil {
		return 0
	}
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		cmd := exec.Command("socat", "stdio", "unix-connect:"+socket)
		cmd.Stdin = strings.NewReader("show stat\n")
		out, err := cmd.Output()
		if err != nil || !strings.HasPrefix(string(out), "# pxname") {
			b.Fatalf("socat: %v", err)
		}
		d[i] = time.Since(start)
	}
	return median(d)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// rawShowStat sends "show stat" on a new connection and reads to EOF.
func rawShowStat(socket string) ([]byte, error) {
	c, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "show stat\n"); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(c)
	if err == nil && !strings.HasPrefix(string(out), "# pxname") {
		err = errors.New("show stat: unexpected answer")
	}
	return out, err
}

// countRows is the number of statistics rows HAProxy has.
func countRows(b *testing.B, h *haproxytest.HAProxy) int {
	b.Helper()
	out, err := rawShowStat(h.Socket)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n
}

// BenchmarkShowStatInProcess is the same path as the stdio benchmark with
// the server in the benchmark's process (its stdio transport over pipes), so
// that one CPU profile covers server and client:
//
//	go test -run XXX -bench BenchmarkShowStatInProcess -benchtime 100x -cpuprofile cpu.out ./proxymcp/
//	go tool pprof -top -cum proxymcp.test cpu.out
func BenchmarkShowStatInProcess(b *testing.B) {
	h := haproxytest.Run(b, haproxytest.Options{BigServers: 1000})
	env := map[string]string{}
	for _, kv := range haproxyEnv(h, "unix") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["LOG_LEVEL"] = "error"
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, nil, func(k string) string { return env[k] }, toServer, fromServer, io.Discard)
	}()
	b.Cleanup(func() {
		cancel()
		fromClient.Close()
		<-done
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient, MaxLineLength: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	rows := countRows(b, h)
	for _, v := range []struct {
		name string
		args map[string]any
	}{
		{"default_fields", map[string]any{}},
		{"all_fields", map[string]any{"fields": []any{"all"}}},
		{"all_fields_objects", map[string]any{"fields": []any{"all"}, "format": "objects"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			timed(b, func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "show_stat", Arguments: v.args})
				if err != nil || res.IsError {
					b.Fatalf("show_stat: %v %s", err, e2e.Text(res))
				}
				if m, _ := res.StructuredContent.(map[string]any); m == nil || int(m["count"].(float64)) != rows {
					b.Fatalf("show_stat: wrong count, HAProxy has %d rows", rows)
				}
			})
		})
	}
}

// rawStdio is a bare MCP client over a server's stdio: one JSON-RPC
// request line written, the answer line read, nothing decoded.
type rawStdio struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	n   int
}

func startRawStdio(b *testing.B, bin string, env []string) *rawStdio {
	b.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LOG_LEVEL=error"}, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	s := &rawStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	s.call(b, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	return s
}

// call sends one request and returns the answer line (notifications
// before it are skipped).
func (s *rawStdio) call(b *testing.B, method, params string) []byte {
	s.n++
	id := strconv.Itoa(s.n)
	if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+"}\n"); err != nil {
		b.Fatal(err)
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			b.Fatalf("%s: %v", method, err)
		}
		if bytes.Contains(line[:min(len(line), 64)], []byte(`"id":`+id+`,`)) || bytes.Contains(line[:min(len(line), 64)], []byte(`"id":`+id+`}`)) {
			return line
		}
	}
}
