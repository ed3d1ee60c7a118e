package rawmcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Stdio is a raw JSON-RPC client of one server process over stdio: each
// request waits for the answer with its id; requests from the server
// (elicitation/create) go to the OnRequest handler, and are answered with
// an empty result without one.
type Stdio struct {
	t         testing.TB
	in        io.WriteCloser
	mu        sync.Mutex
	next      int
	waiters   map[string]chan json.RawMessage
	onRequest func(method string, params json.RawMessage) any
}

// StartStdio starts bin with MCP_TRANSPORT=stdio, a HOME of its own, PATH
// and env; the process is ended (stdin closed, killed after 30 s) when the
// test ends.
func StartStdio(t testing.TB, bin string, env []string) *Stdio {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MCP_TRANSPORT=stdio"}, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Stdio{t: t, in: in, waiters: map[string]chan json.RawMessage{}}
	go p.read(out)
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// read hands each answer to its waiter and answers the server's requests.
func (p *Stdio) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue // a notification
		}
		if m.Method != "" {
			var res any = map[string]any{}
			p.mu.Lock()
			h := p.onRequest
			p.mu.Unlock()
			if h != nil {
				res = h(m.Method, m.Params)
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
			p.Write(b)
			continue
		}
		p.mu.Lock()
		w := p.waiters[string(m.ID)]
		delete(p.waiters, string(m.ID))
		p.mu.Unlock()
		if w != nil {
			w <- line
		}
	}
}

// OnRequest sets what answers the server's requests: h's value is the
// result.
func (p *Stdio) OnRequest(h func(method string, params json.RawMessage) any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onRequest = h
}

// Write sends one message line as it is.
func (p *Stdio) Write(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.in.Write(append(b, '\n'))
}

// RPC sends a request and returns its answer's result and error members
// (one of them nil); no answer within 120 s fails the test.
func (p *Stdio) RPC(method string, params map[string]any) (result, errObj json.RawMessage) {
	p.t.Helper()
	p.mu.Lock()
	p.next++
	id := fmt.Sprint(p.next)
	w := make(chan json.RawMessage, 1)
	p.waiters[id] = w
	p.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	p.Write(b)
	select {
	case line := <-w:
		var a struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		json.Unmarshal(line, &a)
		return a.Result, a.Error
	case <-time.After(120 * time.Second):
		p.t.Fatalf("%s: no answer in 120 s", method)
		return nil, nil
	}
}
