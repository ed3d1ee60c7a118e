package main

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
)

// A second playground on the same ports fails at once, naming the busy port,
// before it builds or starts anything.
func TestBusyPortIsNamed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	var stderr bytes.Buffer
	// The busy port is the third of the four.
	code := run(context.Background(), []string{"--tour-only", "--port-base", strconv.Itoa(busy - 2)}, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if want := "port " + strconv.Itoa(busy) + " is busy"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q lacks %q", stderr.String(), want)
	}
}

func TestBadFlag(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"--nope"}, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}
