package serve

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestGateAnswersQuickMethodsItself proves the quick path is taken: with
// the session known, a ping and a tools/list are answered although nothing
// reads the gate's lines (mcp-go's stdio server is not running), and a tool
// call is not.
func TestGateAnswersQuickMethodsItself(t *testing.T) {
	s := NewServer("gate", "v0")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	g := newStdioGate(inR, outW, nil, 1<<20, time.Second, s.calls, s.MCPServer)
	defer g.close()
	defer inW.Close()
	g.setSession(s.MCPServer.WithContext(context.Background(), nil))
	out := bufio.NewReader(outR)
	for _, tt := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{`{"jsonrpc":"2.0","id":"t","method":"tools/list"}`, `{"jsonrpc":"2.0","id":"t","error":{"code":-32601,"message":"tools not supported"}}`},
	} {
		io.WriteString(inW, tt.line+"\n")
		got, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(got) != tt.want {
			t.Errorf("%s: answered %s, want %s", tt.line, got, tt.want)
		}
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`+"\n")
	select {
	case line := <-g.lines:
		if !strings.Contains(string(line), `"tools/call"`) {
			t.Errorf("passed on %s, want the tool call", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tool call was not passed on to mcp-go")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) != 1 {
		t.Errorf("awaiting %v, want the tool call alone (the quick answers ended their wait)", g.pending)
	}
}
