package runtimeapi_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
		refused         bool
	}{
		{"data", "2.6.12-1+deb12u4\n\n", "2.6.12-1+deb12u4\n\n", false},
		{"no such server", "\n[3]: No such server.\n\n", "No such server.", true},
		{"unknown command", "[6]: Unknown command, but maybe one of the following ones is a better match:\n  clear table\n", "Unknown command, but maybe", true},
		{"permission", "\n[3]: Permission denied\n\n", "Permission denied", true},
		{"permission without prefix", "Permission denied\n", "Permission denied", true},
		{"no blank line", "[3]: maxconn string empty or preceded by garbage", "maxconn string empty", true},
		{"warning is success", "[4]: IP changed from '127.0.0.1' to '127.0.0.2' by 'stats socket command'\n\n", "IP changed", false},
		{"info is success", "[6]: New version created: 1\n\n", "New version created: 1", false},
		{"empty success", "\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runtimeapi.Classify("cmd", tc.raw)
			var re *runtimeapi.ReplyError
			if tc.refused {
				if !errors.As(err, &re) || !strings.HasPrefix(re.Message, tc.want) {
					t.Fatalf("err = %v, want refusal %q", err, tc.want)
				}
				return
			}
			if err != nil || !strings.HasPrefix(out, tc.want) {
				t.Fatalf("out=%q err=%v", out, err)
			}
			if strings.HasPrefix(out, "[") {
				t.Errorf("severity prefix kept: %q", out)
			}
		})
	}
}

func TestExecuteRejectsUnsafeCommandBeforeDialling(t *testing.T) {
	// Nothing listens on this address: a dial would fail differently.
	c := &runtimeapi.Client{Network: "unix", Address: "/nonexistent/admin.sock", Timeout: time.Second}
	for _, cmd := range []string{"show info\nset weight b/s 1", "show info\r", "show\x00info", "add map m <<"} {
		if _, err := c.Execute(context.Background(), cmd); !errors.Is(err, runtimeapi.ErrUnsafeCommand) {
			t.Errorf("%q: err = %v", cmd, err)
		}
	}
}

func TestExecuteAgainstHAProxy(t *testing.T) {
	h := haproxytest.Run(t, haproxytest.Options{BigServers: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, mode := range []string{"unix", "tcp4"} {
		t.Run(mode, func(t *testing.T) {
			c := h.Runtime(mode)
			out, err := c.Execute(ctx, "show stat")
			if err != nil {
				t.Fatal(err)
			}
			// 1,000 big servers + be_big BACKEND + the others: read to EOF, no truncation.
			if n := strings.Count(out, "\nbe_big,big"); n != 1000 {
				t.Fatalf("be_big server rows = %d, want 1000 (answer %d bytes)", n, len(out))
			}
			_, err = c.Execute(ctx, "set server be_app/nosuch weight 5")
			var re *runtimeapi.ReplyError
			if !errors.As(err, &re) || re.Message != "No such server." || !re.NotFound() {
				t.Fatalf("err = %v", err)
			}
			_, err = c.Execute(ctx, "frobnicate")
			if !errors.As(err, &re) || !re.UnknownCommand() {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestExecuteConnectionErrors(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // now refused
	c := &runtimeapi.Client{Network: "tcp4", Address: addr, Timeout: time.Second}
	var ce *runtimeapi.ConnError
	if _, err := c.Execute(ctx, "show info"); !errors.As(err, &ce) {
		t.Fatalf("refused: err = %v", err)
	}

	// A small fake: a peer that accepts and never answers, which a real
	// HAProxy does not do on purpose. The timeout must end the call.
	silent, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	c = &runtimeapi.Client{Network: "tcp4", Address: silent.Addr().String(), Timeout: 200 * time.Millisecond}
	start := time.Now()
	if _, err := c.Execute(ctx, "show info"); !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("silent: err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout took %s", d)
	}
	// Cancellation without any deadline also reaches the socket.
	c.Timeout = 0
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := c.Execute(cctx, "show info"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: err = %v", err)
	}
}
