package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/e2e/rawmcp"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

// resourceServer is a server with one resource and one template.
func resourceServer() *serve.Server {
	s := serve.NewServer("resources", "v0", server.WithResourceCapabilities(false, false))
	s.AddResource(mcp.NewResource("test://known", "known"), func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: "known content"}}, nil
	})
	s.AddResourceTemplate(mcp.NewResourceTemplate("test://item/{id}", "item"), func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: fmt.Sprintf("item %v", r.Params.Arguments["id"])}}, nil
	})
	return s
}

// readAnswer is a resources/read answer.
type readAnswer struct {
	Result *struct {
		Contents []struct{ Text string }
	}
	Error *struct {
		Code    int
		Message string
		Data    map[string]any
	}
}

// TestResourceNotFoundCarriesURI: SEP-2164. A resources/read of a URI that
// names no resource and matches no template is answered with mcp-go's
// error — -32602 on 2026-07-28, -32002 on 2025-11-25, its message — plus
// data {"uri": the URI}, over stdio and HTTP; a known resource and a
// template's URI are still read.
func TestResourceNotFoundCarriesURI(t *testing.T) {
	transports := map[string]func(t *testing.T, version string) func(*testing.T, string) readAnswer{
		"stdio": stdioReader,
		"http":  httpReader,
	}
	for name, start := range transports {
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(name+"/"+version, func(t *testing.T) {
				read := start(t, version)
				wantCode := mcp.INVALID_PARAMS
				if version == "2025-11-25" {
					wantCode = mcp.RESOURCE_NOT_FOUND
				}
				for _, uri := range []string{"test://nowhere", "test://item/42/more", "test://known?x=1"} {
					a := read(t, uri)
					if a.Error == nil || a.Error.Code != wantCode || a.Error.Data["uri"] != uri ||
						a.Error.Message != "handler not found for resource URI '"+uri+"': resource not found" {
						t.Errorf("read %s: %+v %+v, want %d with mcp-go's message and data.uri", uri, a.Error, a.Result, wantCode)
					}
				}
				for uri, want := range map[string]string{"test://known": "known content", "test://item/42": "item [42]"} {
					a := read(t, uri)
					if a.Error != nil || a.Result == nil || len(a.Result.Contents) != 1 || a.Result.Contents[0].Text != want {
						t.Errorf("read %s: %+v %+v, want %q", uri, a.Error, a.Result, want)
					}
				}
			})
		}
	}
}

func modernReadMeta() string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
}

func stdioReader(t *testing.T, version string) func(*testing.T, string) readAnswer {
	s := resourceServer()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- serve.Run(context.Background(), serve.Program{Name: "resources"}, s, serve.Config{Transport: "stdio", ShutdownTimeout: time.Minute}, serve.Options{Stdin: inR, Stdout: outW})
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		<-ran
	})
	l := newLines(t, inW, outR)
	meta := modernReadMeta()
	if version != "2026-07-28" {
		l.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, version)
		l.answer(`"init"`)
		l.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		meta = `"_meta":{}`
	}
	n := 0
	return func(t *testing.T, uri string) readAnswer {
		n++
		l.send(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q,%s}}`, n, uri, meta)
		var a readAnswer
		if err := json.Unmarshal([]byte(l.answer(fmt.Sprint(n)).raw), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
}

func httpReader(t *testing.T, version string) func(*testing.T, string) readAnswer {
	// A WrapMCP as the servers with tasks have (the keeper's Wrap): the
	// URI is added behind it too.
	h := serve.NewHTTPHandler(serve.Program{Name: "resources", Version: "v0"}, resourceServer(), serve.Config{}, nil,
		serve.Options{WrapMCP: func(next http.Handler) http.Handler { return next }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	decode := func(t *testing.T, b []byte) readAnswer {
		var a readAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("answer %q: %v", b, err)
		}
		return a
	}
	if version != "2026-07-28" {
		sess := rawmcp.Connect(t, srv.URL+"/mcp", srv.Client(), "t")
		return func(t *testing.T, uri string) readAnswer {
			sess.N++
			return decode(t, sess.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`, sess.N, uri)))
		}
	}
	return func(t *testing.T, uri string) readAnswer {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":%q,%s}}`, uri, modernReadMeta())
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "resources/read")
		req.Header.Set("Mcp-Name", uri)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return decode(t, b)
	}
}
