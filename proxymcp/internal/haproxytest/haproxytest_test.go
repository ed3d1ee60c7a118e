package haproxytest

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestStartServesRuntimeAPIOnBothEndpoints(t *testing.T) {
	h := Run(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, mode := range []string{"unix", "tcp4"} {
		out, err := h.Runtime(mode).Execute(ctx, "show backend")
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, b := range []string{"be_app", "be_api"} {
			if !strings.Contains(out, b) {
				t.Errorf("%s: show backend lacks %s:\n%s", mode, b, out)
			}
		}
	}
	if err := h.WaitServerStatus(ctx, "be_app", "app3", "DOWN"); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitServerStatus(ctx, "be_app", "app1", "UP"); err != nil {
		t.Fatal(err)
	}
}
