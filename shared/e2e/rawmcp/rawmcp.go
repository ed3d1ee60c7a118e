// Package rawmcp is a test client that speaks MCP's streamable HTTP
// transport with plain HTTP requests, one request per message, and MCP
// over a server process's stdio (Stdio). Tests use it
// where an SDK client would hide what they check: a client that disconnects
// between calls and polls a task later, raw task-augmented requests, the
// exact JSON-RPC answer. Only _test files import it.
package rawmcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ProtocolVersion is the MCP protocol version the session announces.
const ProtocolVersion = "2025-11-25"

// Session is one MCP session over separate HTTP requests to one endpoint.
type Session struct {
	t testing.TB
	// URL is the MCP endpoint every message is POSTed to.
	URL string
	// ID is the Mcp-Session-Id the server gave; empty before initialize.
	ID string
	// N is the JSON-RPC id of the last request RPC sent.
	N int
	// Client sends the requests; its timeout is the caller's patience.
	Client *http.Client
	// Header holds extra headers sent with every request (Authorization).
	Header http.Header
}

// Answer is a JSON-RPC response: a result or an error.
type Answer struct {
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

// New returns a session that has not initialized yet (Connect does both).
func New(t testing.TB, url string, client *http.Client) *Session {
	return &Session{t: t, URL: url, Client: client}
}

// Connect returns a session that has sent initialize (as clientName) and
// notifications/initialized; an initialize error fails the test.
func Connect(t testing.TB, url string, client *http.Client, clientName string) *Session {
	t.Helper()
	s := New(t, url, client)
	s.Initialize(clientName)
	return s
}

// Initialize sends initialize and notifications/initialized; an error
// answer fails the test.
func (s *Session) Initialize(clientName string) {
	s.t.Helper()
	if a := s.RPC("initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":%q,"version":"1"}}`, ProtocolVersion, clientName)); a.Error != nil {
		s.t.Fatalf("initialize: %+v", a.Error)
	}
	s.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// Post sends one message and returns the JSON-RPC answer's bytes: the body
// of a JSON answer, or of an SSE answer the last data line that carries an
// id (notifications come before it). It remembers the session id.
func (s *Session) Post(body string) []byte {
	s.t.Helper()
	_, b := s.Do(body)
	return b
}

// Do is Post that also returns the HTTP status, for tests of refusals.
func (s *Session) Do(body string) (int, []byte) {
	s.t.Helper()
	res, err := s.Client.Do(s.request(body))
	if err != nil {
		s.t.Fatalf("POST %.200s: %v", body, err)
	}
	defer res.Body.Close()
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		s.ID = id
	}
	b, _ := io.ReadAll(res.Body)
	if bytes.HasPrefix(b, []byte("event:")) || bytes.HasPrefix(b, []byte("data:")) {
		var last []byte
		for _, line := range bytes.Split(b, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
				last = d
			}
		}
		b = last
	}
	return res.StatusCode, b
}

// request is a POST of body with the session's headers.
func (s *Session) request(body string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
	if s.ID != "" {
		req.Header.Set("Mcp-Session-Id", s.ID)
	}
	for k, v := range s.Header {
		req.Header[k] = v
	}
	return req
}

// TaskResultAnswering sends tasks/result for task id (2025-11-25) and
// answers each elicitation/create that arrives on its stream with action
// (and empty content); it returns the last such request's line and
// tasks/result's own answer line. The stream lasts as long as the task's
// run, so it is read with a 120 s timeout of its own (s.Client's transport,
// not its timeout); a stream that ends without an answer fails the test.
func (s *Session) TaskResultAnswering(id, action string) (asked, final string) {
	s.t.Helper()
	s.N++
	c := *s.Client
	c.Timeout = 120 * time.Second
	res, err := c.Do(s.request(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, s.N, id)))
	if err != nil {
		s.t.Fatalf("tasks/result %s: %v", id, err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal([]byte(line), &m)
		if m.Method == "elicitation/create" {
			asked = line
			s.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":%q,"content":{}}}`, m.ID, action))
			continue
		}
		if m.Method == "" && len(m.ID) > 0 {
			return asked, line
		}
	}
	s.t.Fatalf("tasks/result's stream ended without an answer (%v)", sc.Err())
	return "", ""
}

// RPC sends a request with the next id and decodes the answer; an answer
// that is not JSON-RPC fails the test.
func (s *Session) RPC(method, params string) Answer {
	s.t.Helper()
	s.N++
	b := s.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.N, method, params))
	var a Answer
	if err := json.Unmarshal(b, &a); err != nil {
		s.t.Fatalf("%s: answer %q: %v", method, b, err)
	}
	return a
}
