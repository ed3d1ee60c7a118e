package errkind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

func TestKindOf(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		err  error
		want Kind
	}{
		{nil, Internal},
		{New(NotFound, "find backend x", nil, ""), NotFound},
		{fmt.Errorf("wrapped: %w", New(Conflict, "x", nil, "")), Conflict},
		{Wrap(New(Permission, "x", nil, ""), "outer", ""), Permission},
		{context.DeadlineExceeded, Timeout},
		{fmt.Errorf("read: %w", os.ErrDeadlineExceeded), Timeout},
		{context.Canceled, Canceled},
		{refused, Unavailable},
		{fmt.Errorf("write: %w", syscall.EPIPE), Unavailable},
		{&net.DNSError{Err: "no such host", Name: "kafka-0"}, Unavailable},
		{&net.DNSError{Err: "i/o timeout", Name: "kafka-0", IsTimeout: true}, Timeout},
		{fmt.Errorf("open: %w", os.ErrPermission), Permission},
		{fmt.Errorf("open: %w", os.ErrNotExist), NotFound},
		{errors.New("boom"), Internal},
	}
	for _, tt := range tests {
		if got := KindOf(tt.err); got != tt.want {
			t.Errorf("KindOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestRendering pins the one line every server's errors are read in: "op:
// cause. hint", a multi-line cause folded, and Message's generic hint by
// kind only when the error carries none.
func TestRendering(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		err           error
		error, method string
	}{
		{New(Invalid, "partition 7 does not exist", nil, ""),
			"partition 7 does not exist", "partition 7 does not exist"},
		{New(Unavailable, "read metadata", refused, "check STREAM_BROKERS"),
			"read metadata: dial tcp: connect: connection refused. check STREAM_BROKERS",
			"read metadata: dial tcp: connect: connection refused. check STREAM_BROKERS"},
		{Wrap(refused, "read metadata", ""),
			"read metadata: dial tcp: connect: connection refused",
			"read metadata: dial tcp: connect: connection refused. Check that the back end is running and reachable at the configured address"},
		{New(Internal, "", errors.New("  line one\n  line two  "), ""), "line one line two", "line one line two"},
		{New(Internal, "op", errors.New("kept  as  is"), ""), "op: kept  as  is", "op: kept  as  is"},
		{Wrap(context.DeadlineExceeded, "run query", ""),
			"run query: context deadline exceeded",
			"run query: context deadline exceeded (timed out). Retry, or raise the timeout if the back end is slow"},
		{Wrap(errors.New("read timeout"), "", "").(*Error), "read timeout", "read timeout"},
		{New(Timeout, "read: i/o timeout", nil, ""), "read: i/o timeout", "read: i/o timeout. Retry, or raise the timeout if the back end is slow"},
		{Wrap(context.Canceled, "commit offsets", ""), "commit offsets: context canceled", "commit offsets: context canceled (the request was cancelled)"},
		{Invalidf("group %q: empty", "g"), `group "g": empty`, `group "g": empty`},
		{NotFoundf("topic %s", "t"), "topic t", "topic t"},
		{New(Permission, "describe acls", errors.New("denied"), ""), "describe acls: denied",
			"describe acls: denied. Check the credentials and permissions configured for this server"},
		{fmt.Errorf("outer: %w", New(Conflict, "group g has members", nil, "stop its consumers")),
			"outer: group g has members. stop its consumers", "outer: group g has members. stop its consumers"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.error {
			t.Errorf("Error() = %q, want %q", got, tt.error)
		}
		if got := Message(tt.err); got != tt.method {
			t.Errorf("Message() = %q, want %q", got, tt.method)
		}
	}
	if Wrap(nil, "x", "y") != nil || Message(nil) != "" {
		t.Error("Wrap(nil) and Message(nil) must be empty")
	}
}
