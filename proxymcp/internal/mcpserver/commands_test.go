package mcpserver

import (
	"bytes"
	"io"
	"net"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// recorder relays the runtime API over TCP and keeps every command line
// proxymcp sends (a relay, not a fake: HAProxy answers every command).
type recorder struct {
	mu     sync.Mutex
	seq    int
	lines  map[int][]string // by connection, in the order they were opened
	active int              // connections still being relayed
	idle   *sync.Cond       // signalled when active drops to 0
}

// take returns the lines recorded so far, once every connection is done.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.active > 0 {
		r.idle.Wait()
	}
	seqs := make([]int, 0, len(r.lines))
	for n := range r.lines {
		seqs = append(seqs, n)
	}
	sort.Ints(seqs)
	var out []string
	for _, n := range seqs {
		out = append(out, r.lines[n]...)
	}
	r.lines = map[int][]string{}
	return out
}

func newRecorder(t *testing.T, target string) (*recorder, string) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{lines: map[int][]string{}}
	r.idle = sync.NewCond(&r.mu)
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			r.mu.Lock()
			r.active++
			r.seq++
			n := r.seq
			r.mu.Unlock()
			go func() {
				defer wg.Done()
				defer c.Close()
				up, err := net.Dial("tcp4", target)
				if err != nil {
					r.mu.Lock()
					r.active--
					r.idle.Broadcast()
					r.mu.Unlock()
					return
				}
				defer up.Close()
				var sent bytes.Buffer
				done := make(chan struct{})
				go func() {
					io.Copy(up, io.TeeReader(c, &sent))
					up.(*net.TCPConn).CloseWrite()
					close(done)
				}()
				io.Copy(c, up)
				c.Close() // the answer is complete: let the client see its end
				<-done
				r.mu.Lock()
				for _, line := range strings.Split(sent.String(), "\n") {
					line = strings.TrimPrefix(line, "set severity-output number;")
					if line != "" && line != "prompt" && line != "quit" {
						r.lines[n] = append(r.lines[n], line)
					}
				}
				r.active--
				r.idle.Broadcast()
				r.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return r, l.Addr().String()
}

// reads are the commands that change nothing: previews and read-backs.
func isRead(cmd string) bool {
	for _, p := range []string{"show ", "get ", "help", "wait "} {
		if strings.HasPrefix(cmd, p) || cmd == strings.TrimSpace(p) {
			return true
		}
	}
	return false
}

// TestPlannedCommandsAreSent runs every write tool for real (policy none)
// through a relay that records what reaches HAProxy: the writes sent are
// exactly the plan's commands, as the dry run and the approval showed them
// (read-only commands aside: previews and read-backs).
func TestPlannedCommandsAreSent(t *testing.T) {
	h := settled(t)
	t.Cleanup(h.Release)
	rec, addr := newRecorder(t, h.RuntimeTCP)
	_, c := pipelineClient(t, toolcall.Config{Approval: approval.Config{Policy: approval.None}, Audit: audit.Config{Dest: "off"}}, "", func(p *toolcall.Pipeline) {
		// One connection per command, so each command's line is recorded
		// when its answer is complete.
		New(one(haproxy.New(&runtimeapi.Client{Network: "tcp4", Address: addr, Timeout: 5 * time.Second}, nil)), Options{}).Register(p)
	})
	callTool := func(name string, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}

	cases := writeCases(h, "")
	// Calls that need something to act on get it first.
	cases["del_server"] = writeCase{setup: []string{"add server be_app/victim 127.0.0.1:1"}, args: map[string]any{"backend": "be_app", "server": "victim"}}
	cases["add_server"] = writeCase{args: map[string]any{"backend": "be_app", "server": "new1", "address": "127.0.0.1", "port": 1, "check": true, "enable": true, "weight": 5, "maxconn": 9}}
	names := make([]string, 0, len(cases))
	for name := range classes() {
		if lifecycleCovered[name] {
			continue // lifecycle_test.go
		}
		names = append(names, name)
	}
	sort.Strings(names)
	version := regexp.MustCompile(`@[0-9]+ `)
	for _, name := range names {
		c := cases[name]
		for _, cmd := range c.setup {
			exec(t, h, cmd)
		}
		args := c.args
		if name == "shutdown_session" {
			exec(t, h, "enable frontend fe_web")
			args = map[string]any{"session_id": slowSession(t, h)}
		}
		dry := map[string]any{"dryRun": true}
		for k, v := range args {
			dry[k] = v
		}
		planned := preview(t, callTool(name, dry)).Commands
		rec.take()
		res := callTool(name, args)
		var sent []string
		for _, cmd := range rec.take() {
			if !isRead(cmd) {
				sent = append(sent, version.ReplaceAllString(cmd, "@<new version> "))
			}
		}
		var want []string
		for _, cmd := range planned {
			if !strings.HasPrefix(cmd, "only if the runtime API cannot be reached") && !strings.HasPrefix(cmd, "(wait up to") {
				want = append(want, cmd)
			}
		}
		if res.IsError {
			// HAProxy refused part way (a map cleared by an earlier case):
			// what was sent must still be a prefix of the plan.
			want = want[:min(len(want), len(sent))]
			t.Logf("%s: refused by HAProxy after %d command(s): %.150s", name, len(sent), text(res))
			if len(sent) == 0 {
				t.Errorf("%s: nothing was sent", name)
			}
		}
		if strings.Join(sent, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: sent\n  %s\nplanned\n  %s\n(result: %.200s)", name, strings.Join(sent, "\n  "), strings.Join(want, "\n  "), text(res))
		}
	}
}
