package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// filler streams n bytes of b without holding them in memory.
type filler struct {
	n int64
	b byte
}

func (f *filler) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	for i := range p {
		p[i] = f.b
	}
	f.n -= int64(len(p))
	return len(p), nil
}

// bigCall is a tools/call whose body is size bytes: a JSON prefix, a long
// string argument streamed from filler, and the closing bytes.
func bigCall(size int64) io.Reader {
	const head = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"whoami","arguments":{"pad":"`
	const tail = `"}}}`
	return io.MultiReader(strings.NewReader(head), &filler{n: size - int64(len(head)+len(tail)), b: 'a'}, strings.NewReader(tail))
}

// chunked encodes r as an HTTP/1.1 chunked body.
func chunked(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := fmt.Fprintf(pw, "%x\r\n%s\r\n", n, buf[:n]); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			}
			if err != nil {
				io.WriteString(pw, "0\r\n\r\n")
				pw.Close()
				return
			}
		}
	}()
	return pr
}

// TestBodyCapOverHTTP: a 50 MB body (declared or chunked, on /mcp and
// /message) is refused with 413 and a JSON-RPC error after the server read
// at most the cap plus a small margin from its socket; the tool never runs
// and the server keeps serving. The cap's edge is exact.
func TestBodyCapOverHTTP(t *testing.T) {
	const max = 64 << 10
	const big = 50 << 20
	p := newInproc(t, Config{MaxRequestBytes: max}, nil)
	host := p.addr
	type variant struct {
		name string
		head string
		body func() io.Reader
	}
	var variants []variant
	for _, path := range []string{"/mcp", "/message?sessionId=x"} {
		h := func(extra string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" + extra
		}
		variants = append(variants,
			variant{path + " 50 MB declared", h(fmt.Sprintf("Content-Length: %d", big)), func() io.Reader { return bigCall(big) }},
			variant{path + " 50 MB chunked", h("Transfer-Encoding: chunked"), func() io.Reader { return chunked(bigCall(big)) }},
			variant{path + " cap+1 declared", h(fmt.Sprintf("Content-Length: %d", max+1)), func() io.Reader { return bigCall(max + 1) }},
			variant{path + " cap+1 chunked", h("Transfer-Encoding: chunked"), func() io.Reader { return chunked(bigCall(max + 1)) }},
			variant{path + " 50 MB declared, little sent", h(fmt.Sprintf("Content-Length: %d", big)), func() io.Reader { return strings.NewReader(callMsg) }},
			variant{path + " 50 MB of one chunk header", h("Transfer-Encoding: chunked"), func() io.Reader {
				return io.MultiReader(strings.NewReader(fmt.Sprintf("%x\r\n", big)), bigCall(big))
			}},
			variant{path + " 50 MB in 1-byte chunks", h("Transfer-Encoding: chunked"), func() io.Reader {
				return io.MultiReader(strings.NewReader(strings.Repeat("1\r\na\r\n", 2*max)), strings.NewReader("0\r\n\r\n"))
			}},
			variant{path + " 50 MB of whitespace", h(fmt.Sprintf("Content-Length: %d", big)), func() io.Reader { return &filler{n: big, b: ' '} }},
		)
	}
	for _, v := range variants {
		resp, body, read := p.rawRead(t, v.head, v.body())
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: HTTP %d %s, want 413", v.name, resp.StatusCode, body)
			continue
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error.Code != -32600 || !strings.Contains(msg.Error.Message, "MCP_MAX_REQUEST_BYTES") {
			t.Errorf("%s: body %q is not the JSON-RPC error", v.name, body)
		}
		// The cap (in wire bytes: a 1-byte chunk takes 6), net/http's
		// post-handler discard (256 KiB) and buffers.
		wire := int64(1)
		if strings.Contains(v.name, "1-byte chunks") {
			wire = 6
		}
		if limit := wire*max + 512<<10; read > limit {
			t.Errorf("%s: the server read %d bytes from its socket, more than %d", v.name, read, limit)
		}
		t.Logf("%s: 413 after %d bytes read", v.name, read)
	}
	if n := p.calls.Load(); n != 0 {
		t.Fatalf("the tool ran %d times for refused bodies", n)
	}
	// At the cap exactly, the request passes the cap (and fails later, as a
	// tools/call without a session, not as 413).
	for _, te := range []string{fmt.Sprintf("Content-Length: %d", max), "Transfer-Encoding: chunked"} {
		body := bigCall(max)
		if strings.HasPrefix(te, "Transfer") {
			body = chunked(body)
		}
		resp, b := p.raw(t, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+te, body)
		if resp.StatusCode == http.StatusRequestEntityTooLarge {
			t.Errorf("a body of exactly the cap (%s) was refused: %s", te, b)
		}
	}
	// The server still serves.
	if resp, b := p.raw(t, post(host, len(initializeMsg)), strings.NewReader(initializeMsg)); resp.StatusCode != http.StatusOK {
		t.Errorf("initialize after the refusals: HTTP %d %s", resp.StatusCode, b)
	}
}

// stdioRun serves s over stdio with the given input and returns every line
// written to stdout, keyed by the JSON id text.
func stdioRun(t *testing.T, max int64, input io.Reader) (map[string]string, *atomic.Int32) {
	t.Helper()
	calls := new(atomic.Int32)
	s := NewServer("stdiocap", "0.0.1")
	s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		return mcp.NewToolResultText("ok"), nil
	})
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Program{Name: "stdiocap"}, s, Config{Transport: "stdio", MaxRequestBytes: max, ShutdownTimeout: 10 * time.Second}, Options{Stdin: input, Stdout: pw})
		pw.Close()
	}()
	out := map[string]string{}
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("stdout line is not JSON: %q", sc.Text())
			continue
		}
		id := string(m.ID)
		if id == "" {
			id = "null"
		}
		for {
			if _, dup := out[id]; !dup {
				break
			}
			id += "'"
		}
		out[id] = sc.Text()
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out, calls
}

const stdioInit = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// TestStdioLineCap: an over-long line gets one JSON-RPC error (with the
// request's id when it comes before the long part, else null) and the
// server goes on with the next line; a line of exactly the cap is served.
func TestStdioLineCap(t *testing.T) {
	const max = 4096
	pad := func(n int) string { return strings.Repeat("a", n) }
	call := func(id, pad string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"whoami","arguments":{"pad":"` + pad + `"}}}`
	}
	exact := call("100", "")
	exact = call("100", pad(max-len(exact)))
	tests := []struct {
		name   string
		line   string
		wantID string // id of the error answer
	}{
		{"id first", call("1", pad(max)), "1"},
		{"string id", call(`"abc"`, pad(max)), `"abc"`},
		{"negative id", call("-5", pad(max)), "-5"},
		{"one byte over", call("2", pad(max-len(call("2", ""))+1)), "2"},
		{"id after params", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"whoami","arguments":{"pad":"` + pad(max) + `"}},"id":3}`, "null"},
		{"id is an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"x","params":"` + pad(max) + `"}`, "null"},
		{"id is huge", `{"jsonrpc":"2.0","id":"` + pad(2*max) + `","method":"x"}`, "null"},
		{"batch", `[` + call("4", pad(max)) + `]`, "null"},
		{"whitespace", strings.Repeat(" ", 2*max), "null"},
		{"not JSON", pad(3 * max), "null"},
		{"invalid UTF-8", strings.Repeat("\xff", 2*max), "null"},
		{"escaped key", `{"jsonrpc":"2.0","\u0069d":6,"method":"x","params":"` + pad(max) + `"}`, "6"},
	}
	var in strings.Builder
	in.WriteString(stdioInit)
	for _, tc := range tests {
		in.WriteString(tc.line + "\n")
	}
	in.WriteString(exact + "\n")
	in.WriteString(call("200", "") + "\n")
	out, calls := stdioRun(t, max, strings.NewReader(in.String()))
	for _, tc := range tests {
		got := out[tc.wantID]
		if tc.wantID == "null" {
			got = ""
			for id, line := range out {
				if strings.HasPrefix(id, "null") && strings.Contains(line, "MCP_MAX_REQUEST_BYTES") {
					got = line
				}
			}
		}
		if !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, "MCP_MAX_REQUEST_BYTES") {
			t.Errorf("%s: answer %q, want the -32600 size error with id %s", tc.name, got, tc.wantID)
		}
	}
	nulls := 0
	for id := range out {
		if strings.HasPrefix(id, "null") {
			nulls++
		}
	}
	if want := 7; nulls != want {
		t.Errorf("%d answers with id null, want %d: %v", nulls, want, out)
	}
	if !strings.Contains(out["100"], `"result"`) || !strings.Contains(out["200"], `"result"`) {
		t.Errorf("the line of exactly the cap or the next line was not served: %q / %q", out["100"], out["200"])
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the tool ran %d times, want 2 (the line at the cap and the last)", n)
	}
}

// TestStdioLineCapMemory streams one 50 MB line, then a normal request,
// and measures the bytes the process allocated meanwhile: bounded by the
// cap, not by the line.
func TestStdioLineCapMemory(t *testing.T) {
	const max = 64 << 10
	const big = 50 << 20
	input := io.MultiReader(strings.NewReader(stdioInit), bigCall(big), strings.NewReader("\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, calls := stdioRun(t, max, input)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	if !strings.Contains(out["9"], "MCP_MAX_REQUEST_BYTES") || !strings.Contains(out["2"], `"result"`) {
		t.Errorf("answers %v", out)
	}
	if calls.Load() != 0 {
		t.Error("the tool ran for the oversized line")
	}
	if allocated > 16<<20 {
		t.Errorf("serving a 50 MB line allocated %d bytes, want < 16 MiB", allocated)
	}
	t.Logf("a 50 MB line cost %d bytes of allocation", allocated)
}
