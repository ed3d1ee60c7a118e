package mcperr

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestToolResultIsOneActionableLine(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		err  error
		want []string
	}{
		{Wrap(refused, "connect to the HAProxy runtime API at 127.0.0.1:9999", "check PROXY_HOST and PROXY_PORT"),
			[]string{"connect to the HAProxy runtime API at 127.0.0.1:9999", "connection refused", "check PROXY_HOST and PROXY_PORT"}},
		{Wrap(refused, "read metadata from broker 1", ""),
			[]string{"read metadata from broker 1", "Check that the back end is running"}},
		{Wrap(context.DeadlineExceeded, "run query", ""), []string{"run query", "raise the timeout"}},
		{New(Invalid, "backend: must match [A-Za-z0-9_.:-]{1,64}", nil, ""), []string{"backend: must match"}},
		{errors.New("line one\nline two"), []string{"line one line two"}},
	}
	for _, tt := range tests {
		res := ToolResult(tt.err)
		if !res.IsError {
			t.Fatalf("not an error result")
		}
		text := Message(tt.err)
		if strings.Contains(text, "\n") {
			t.Errorf("message spans lines: %q", text)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("message %q lacks %q", text, w)
			}
		}
	}
	if Wrap(nil, "x", "y") != nil {
		t.Error("Wrap(nil) must be nil")
	}
}
