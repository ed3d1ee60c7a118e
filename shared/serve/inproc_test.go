package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/metrics"
)

// inproc is the real HTTP surface every server uses (NewServer +
// NewHTTPHandler) served in-process, with one tool that counts its calls.
type inproc struct {
	base    string
	addr    string
	calls   atomic.Int32
	srv     *httptest.Server
	read    *atomic.Int64 // bytes the server read from its sockets
	conns   *sync.Map     // client's address → *connCount
	metrics *metrics.Metrics
	server  *Server
	handler *HTTPHandler
	hold    chan struct{} // closing it lets "hold" calls return
}

// newInproc starts the surface; with authCfg, OAuth is on (its BaseURL is
// filled in with the server's address).
func newInproc(t *testing.T, cfg Config, authCfg *httpauth.Config) *inproc {
	t.Helper()
	return newInprocWith(t, cfg, authCfg, Options{})
}

// newInprocWith is newInproc with options (a readiness probe, a logger).
func newInprocWith(t *testing.T, cfg Config, authCfg *httpauth.Config, o Options) *inproc {
	t.Helper()
	p := &inproc{read: new(atomic.Int64), conns: new(sync.Map), hold: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-p.hold:
		default:
			close(p.hold)
		}
	})
	s := NewServer("inproc", "0.0.1")
	s.AddTool(mcp.NewTool("hold"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-p.hold:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("held"), nil
	})
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("returns the verified caller")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p.calls.Add(1)
			if id, ok := httpauth.IdentityFromContext(ctx); ok {
				return mcp.NewToolResultText(id.Subject), nil
			}
			return mcp.NewToolResultText("anonymous"), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithString("why")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("failed as asked"), nil
	})
	s.AddTool(mcp.NewTool("boom"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("handler failure")
	})
	p.metrics = s.Metrics
	p.srv = httptest.NewUnstartedServer(nil)
	p.srv.Listener = countingListener{p.srv.Listener, p.read, p.conns}
	p.addr = p.srv.Listener.Addr().String()
	p.base = "http://" + p.addr
	if cfg.Transport == "" {
		cfg.Transport = "http"
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if testing.Verbose() {
			logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
		}
	}
	o.Logger = logger
	var auth *httpauth.Layer
	if authCfg != nil {
		ac := *authCfg
		ac.Enabled = true
		ac.BaseURL = p.base
		var err error
		if auth, err = httpauth.New(context.Background(), ac, logger); err != nil {
			t.Fatal(err)
		}
		cfg.Auth = ac
	}
	p.server = s
	p.handler = NewHTTPHandler(Program{Name: "inproc", Version: "0.0.1"}, s, cfg, auth, o)
	// The product's server settings (header timeout, idle connections).
	hs := newHTTPServer(p.handler, cfg, logger)
	hs.Addr = p.srv.Config.Addr
	p.srv.Config = hs
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	t.Cleanup(p.handler.Close)
	return p
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// countingListener counts the bytes the server reads from every connection,
// in all and per connection, so that a test can prove how much of a body
// was consumed.
type countingListener struct {
	net.Listener
	n     *atomic.Int64
	conns *sync.Map // client's address → *connCount
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &connCount{done: make(chan struct{})}
	l.conns.Store(c.RemoteAddr().String(), cc)
	return countingConn{c, l.n, cc}, nil
}

// connCount is what the server read from one connection; done is closed
// once a read of it fails (closed by either side), after which n is final.
type connCount struct {
	n    atomic.Int64
	done chan struct{}
	once sync.Once
}

type countingConn struct {
	net.Conn
	n  *atomic.Int64
	cc *connCount
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	c.cc.n.Add(int64(n))
	if err != nil {
		c.cc.once.Do(func() { close(c.cc.done) })
	}
	return n, err
}

func (c countingConn) Close() error {
	err := c.Conn.Close()
	c.cc.once.Do(func() { close(c.cc.done) })
	return err
}

// rawRead is raw, and then the bytes the server read from that request's
// connection in all, once the server has stopped reading it: what other
// connections read meanwhile is not counted.
func (p *inproc) rawRead(t *testing.T, head string, body io.Reader) (*http.Response, string, int64) {
	t.Helper()
	var local string
	resp, b := p.rawConn(t, head, body, func(c net.Conn) { local = c.LocalAddr().String() })
	v, ok := p.conns.Load(local)
	if !ok {
		t.Fatalf("the server never accepted the connection from %s", local)
	}
	cc := v.(*connCount)
	select {
	case <-cc.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server still reads the connection from %s 30 s after its answer", local)
	}
	return resp, b, cc.n.Load()
}

// raw sends head (request line and headers, CRLF-separated, without the
// blank line) and body over a fresh TCP connection, exactly as given, and
// returns the response. A body write the server cuts short is not an error.
func (p *inproc) raw(t *testing.T, head string, body io.Reader) (*http.Response, string) {
	t.Helper()
	return p.rawConn(t, head, body, nil)
}

// rawConn is raw, telling seen the connection before anything is sent.
func (p *inproc) rawConn(t *testing.T, head string, body io.Reader, seen func(net.Conn)) (*http.Response, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if seen != nil {
		seen(c)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, head+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if body != nil {
		go io.Copy(c, body)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read the answer to %q: %v", strings.SplitN(head, "\r\n", 2)[0], err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp, string(b)
}

const (
	initializeMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	callMsg       = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
)

// post builds a raw POST /mcp head with the given Host and extra headers.
func post(host string, length int, extra ...string) string {
	h := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d", host, length)
	for _, e := range extra {
		h += "\r\n" + e
	}
	return h
}
