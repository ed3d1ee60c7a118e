package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/serve"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// modernMeta is a 2026-07-28 request's _meta, declaring the tasks
// extension when ext is true.
func modernMeta(ext bool) string {
	caps := `{}`
	if ext {
		caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// wireMsg is one line a server wrote on stdout.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta struct {
			SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		TaskID string          `json:"taskId"`
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// lines is a raw stdio client: it writes request lines and keeps every
// line the server writes, in order.
type lines struct {
	t   *testing.T
	in  io.WriteCloser
	mu  sync.Mutex
	got []wireMsg
	new chan struct{} // closed (and replaced) on each line
	eof bool
}

func newLines(t *testing.T, in io.WriteCloser, out io.Reader) *lines {
	l := &lines{t: t, in: in, new: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m wireMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout line %q is no JSON-RPC message: %v", sc.Text(), err)
			}
			m.raw = sc.Text()
			l.mu.Lock()
			l.got = append(l.got, m)
			close(l.new)
			l.new = make(chan struct{})
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.eof = true
		close(l.new)
		l.mu.Unlock()
	}()
	return l
}

func (l *lines) send(format string, args ...any) {
	l.t.Helper()
	if _, err := fmt.Fprintf(l.in, format+"\n", args...); err != nil {
		l.t.Fatalf("write to the server: %v", err)
	}
}

// wait returns the index and the first line from index from on that
// matches ok; none within a minute fails the test.
func (l *lines) wait(from int, what string, ok func(wireMsg) bool) (int, wireMsg) {
	l.t.Helper()
	deadline := time.After(time.Minute)
	for {
		l.mu.Lock()
		for i := from; i < len(l.got); i++ {
			if ok(l.got[i]) {
				m := l.got[i]
				l.mu.Unlock()
				return i, m
			}
		}
		eof, more := l.eof, l.new
		l.mu.Unlock()
		if eof {
			l.t.Fatalf("stdout ended before %s; lines: %s", what, l.dump())
		}
		select {
		case <-more:
		case <-deadline:
			l.t.Fatalf("no %s within a minute; lines: %s", what, l.dump())
		}
	}
}

// answer waits for the answer to request id.
func (l *lines) answer(id string) wireMsg {
	l.t.Helper()
	_, m := l.wait(0, "the answer to request "+id, func(m wireMsg) bool { return string(m.ID) == id && m.Method == "" })
	return m
}

func (l *lines) dump() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, m := range l.got {
		b.WriteString("\n  " + m.raw)
	}
	return b.String()
}

// count is how many lines so far match ok.
func (l *lines) count(ok func(wireMsg) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.got {
		if ok(m) {
			n++
		}
	}
	return n
}

func ofListen(id string) func(wireMsg) bool {
	return func(m wireMsg) bool { return string(m.Params.Meta.SubscriptionID) == id }
}

func taskNote(sub, task, status string) func(wireMsg) bool {
	return func(m wireMsg) bool {
		return m.Method == "notifications/tasks" && string(m.Params.Meta.SubscriptionID) == sub && m.Params.TaskID == task && m.Params.Status == status
	}
}

// createTask calls tool as a 2026-07-28 extension task and returns its id.
func (l *lines) createTask(id, tool, args string) string {
	l.t.Helper()
	l.send(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`, id, tool, args, modernMeta(true))
	a := l.answer(fmt.Sprintf("%q", id))
	var r struct{ ResultType, TaskID string }
	if a.Error != nil || json.Unmarshal(a.Result, &r) != nil || r.ResultType != "task" || r.TaskID == "" {
		l.t.Fatalf("create a %s task: %s", tool, a.raw)
	}
	return r.TaskID
}

func (l *lines) listen(id string, ext bool, taskIDs ...string) {
	l.t.Helper()
	ids, _ := json.Marshal(taskIDs)
	l.send(`{"jsonrpc":"2.0","id":%q,"method":"subscriptions/listen","params":{"notifications":{"taskIds":%s},%s}}`, id, ids, modernMeta(ext))
}

// TestTaskStatusListenOverStdio: the conformance server, a real process
// built from serve and the tasks keeper, over stdio. A subscriptions/listen
// for two of the caller's tasks and an unknown id is acknowledged with the
// two only; while it is open, ping and tasks/get are answered; each task's
// changes arrive as notifications/tasks carrying the DetailedTask (the
// question while input_required, the result inline once completed, a
// tasks/cancel's cancelled), tagged with the listen's id; the listen's
// result closes it once both have ended. Without the extension: -32021.
func TestTaskStatusListenOverStdio(t *testing.T) {
	bin := e2e.Build(t, "../conformance/cmd/conformanceserver")
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MCP_TRANSPORT=stdio"}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	l := newLines(t, in, out)

	asks := l.createTask("c1", "confirm_delete", `{"filename":"notes.txt"}`)
	slow := l.createTask("c2", "slow_compute", `{"seconds":60,"label":"slow"}`)
	l.listen("L", true, asks, slow, "6f1c1f2e-8c9b-4f0e-9a34-1d2b3c4d5e6f")
	_, ack := l.wait(0, "the acknowledgement", func(m wireMsg) bool { return m.Method == "notifications/subscriptions/acknowledged" })
	if string(ack.Params.Meta.SubscriptionID) != `"L"` || !slices.Equal(ack.Params.Notifications.TaskIDs, []string{asks, slow}) {
		t.Fatalf("acknowledgement %s, want subscription \"L\" and the two own tasks only", ack.raw)
	}
	_, note := l.wait(0, "input_required of "+asks, taskNote(`"L"`, asks, "input_required"))
	if !strings.Contains(note.raw, `"inputRequests"`) || !strings.Contains(note.raw, "Delete notes.txt?") {
		t.Fatalf("input_required without its question: %s", note.raw)
	}

	// Other requests are served while the listen is open.
	l.send(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
	if a := l.answer(`"p1"`); a.Error != nil {
		t.Fatalf("ping while listening: %s", a.raw)
	}
	l.send(`{"jsonrpc":"2.0","id":"g1","method":"tasks/get","params":{"taskId":%q,%s}}`, slow, modernMeta(true))
	if a := l.answer(`"g1"`); a.Error != nil || !strings.Contains(string(a.Result), `"status":"working"`) {
		t.Fatalf("tasks/get while listening: %s", a.raw)
	}

	l.send(`{"jsonrpc":"2.0","id":"u1","method":"tasks/update","params":{"taskId":%q,"inputResponses":{"approve-1":{"action":"accept","content":{"confirm":true}}},%s}}`, asks, modernMeta(true))
	if a := l.answer(`"u1"`); a.Error != nil {
		t.Fatalf("tasks/update: %s", a.raw)
	}
	_, done := l.wait(0, "completed of "+asks, taskNote(`"L"`, asks, "completed"))
	if !strings.Contains(string(done.Params.Result), "notes.txt: accept") {
		t.Fatalf("completed without the result inline: %s", done.raw)
	}
	if l.count(func(m wireMsg) bool { return string(m.ID) == `"L"` && m.Method == "" }) != 0 {
		t.Fatalf("the listen ended while %s was working: %s", slow, l.dump())
	}
	l.send(`{"jsonrpc":"2.0","id":"x1","method":"tasks/cancel","params":{"taskId":%q,%s}}`, slow, modernMeta(true))
	if a := l.answer(`"x1"`); a.Error != nil {
		t.Fatalf("tasks/cancel: %s", a.raw)
	}
	cancelled, _ := l.wait(0, "cancelled of "+slow, taskNote(`"L"`, slow, "cancelled"))
	end, res := l.wait(0, "the listen's result", func(m wireMsg) bool { return string(m.ID) == `"L"` && m.Method == "" })
	if end < cancelled || !strings.Contains(string(res.Result), `"resultType":"complete"`) || !strings.Contains(string(res.Result), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("the listen's result %s (line %d, the last notification line %d)", res.raw, end, cancelled)
	}

	l.listen("N", false, asks)
	if a := l.answer(`"N"`); a.Error == nil || a.Error.Code != -32021 {
		t.Fatalf("a listen without the extension: %s, want -32021", a.raw)
	}

}

// TestTaskStatusListenEnds: in process, so that the goroutines can be
// seen. A notifications/cancelled naming the listen's request id ends its
// goroutine, and nothing more is sent for it although its task changes
// afterwards. The end of input ends another listen at once, although its
// task still runs (the gate holds the end of input back for it, up to the
// shutdown timeout, as for every call); Run returns once the task ends,
// with no listen goroutine left.
func TestTaskStatusListenEnds(t *testing.T) {
	k := tasks.NewKeeper(tasks.Config{})
	s := serve.NewServer("listen", "v0", k.ServerOptions()...)
	release := make(chan struct{})
	s.AddTool(mcp.NewTool("wait", mcp.WithTaskSupport(mcp.TaskSupportOptional)), k.Tool(func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
			return mcp.NewToolResultText("released"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- serve.Run(context.Background(), serve.Program{Name: "listen"}, s, serve.Config{Transport: "stdio", ShutdownTimeout: 10 * time.Minute}, serve.Options{Stdin: inR, Stdout: outW})
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		k.Stop()
	})
	l := newLines(t, inW, outR)
	// following counts the goroutines running a listen's status loop.
	following := func() int {
		buf := make([]byte, 4<<20)
		n := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "tasks.(*Keeper).follow(") {
				n++
			}
		}
		return n
	}

	first := l.createTask("c1", "wait", `{}`)
	l.listen("C", true, first)
	l.wait(0, "the acknowledgement of C", ofListen(`"C"`))
	if n := following(); n != 1 {
		t.Fatalf("%d status loops running with one listen open", n)
	}
	l.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"C","reason":"done with it"}}`)
	for deadline := time.Now().Add(time.Minute); following() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listen's status loop still runs a minute after notifications/cancelled named it")
		}
	}
	before := l.count(ofListen(`"C"`))
	l.send(`{"jsonrpc":"2.0","id":"x1","method":"tasks/cancel","params":{"taskId":%q,%s}}`, first, modernMeta(true))
	l.answer(`"x1"`)
	l.send(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
	l.answer(`"p1"`)
	if after := l.count(ofListen(`"C"`)); after != before || l.count(func(m wireMsg) bool { return string(m.ID) == `"C"` }) != 0 {
		t.Fatalf("a cancelled listen still sent: %s", l.dump())
	}

	second := l.createTask("c2", "wait", `{}`)
	l.listen("E", true, second)
	l.wait(0, "the acknowledgement of E", ofListen(`"E"`))
	inW.Close()
	for deadline := time.Now().Add(time.Minute); following() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listen's status loop still runs a minute after input ended")
		}
	}
	if l.count(func(m wireMsg) bool { return string(m.ID) == `"E"` }) != 0 {
		t.Fatalf("a listen ended by the end of input was answered: %s", l.dump())
	}
	close(release)
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run still serves a minute after its input ended and its task's run returned")
	}
	if n := following(); n != 0 {
		t.Fatalf("%d status loops outlive Run", n)
	}
}
