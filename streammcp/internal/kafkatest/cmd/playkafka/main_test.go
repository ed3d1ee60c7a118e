package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

// TestPlaygroundCluster runs the command as the playground does: one JSON
// line on stdout when ready, a lagging group, an under-replicated
// partition, a producer that keeps writing, and a clean exit on SIGTERM.
func TestPlaygroundCluster(t *testing.T) {
	bin := e2e.Build(t, ".")
	cmd := exec.Command(bin, "-rate", "50")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var ready struct{ Brokers string }
	select {
	case l := <-lines:
		if err := json.Unmarshal([]byte(l), &ready); err != nil || len(strings.Split(ready.Brokers, ",")) != 3 {
			t.Fatalf("ready line %q: %v", l, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no ready line within 30s; stderr:\n%s", stderr.String())
	}
	c, err := kafka.New(kafka.Options{Brokers: strings.Split(ready.Brokers, ","), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o := report.NewOverview(cl); o.BrokerCount != 3 || o.UnderReplicatedPartitions != 1 || o.HealthStatus != "warning" {
		t.Errorf("overview %+v", o)
	}
	g1, err := c.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := report.NewLagReport(g1, 1000); r.GroupsWithHighLag < 1 {
		t.Errorf("no group past the default threshold: %+v", r.GroupSummary)
	}
	// The producer keeps writing.
	time.Sleep(500 * time.Millisecond)
	g2, err := c.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if total(g2) <= total(g1) {
		t.Errorf("log-end offsets did not grow: %d then %d", total(g1), total(g2))
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15s of SIGTERM")
	}
	t.Logf("exited %s after SIGTERM", time.Since(start))
	for l := range lines {
		t.Errorf("extra stdout line %q", l)
	}
}

func total(g *report.Groups) int64 {
	var n int64
	for _, gr := range g.Groups {
		for _, o := range gr.Offsets {
			n += o.LogEnd
		}
	}
	return n
}

// TestQuietCluster: -scenario=quiet is a healthy cluster with no lag; an
// unknown scenario is refused naming the accepted ones.
func TestQuietCluster(t *testing.T) {
	bin := e2e.Build(t, ".")
	out, err := exec.Command(bin, "-scenario=busy").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown -scenario \"busy\": use seeded or quiet`) {
		t.Errorf("unknown scenario: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-scenario=quiet")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
	}()
	var ready struct{ Brokers string }
	select {
	case l := <-line:
		if err := json.Unmarshal([]byte(l), &ready); err != nil {
			t.Fatalf("ready line %q: %v", l, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no ready line within 30s")
	}
	c, err := kafka.New(kafka.Options{Brokers: strings.Split(ready.Brokers, ","), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := c.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h := report.NewHealthCheck(cl, g, "", 1000); h.OverallStatus != "healthy" || h.ConsumerStatus.TotalGroups != 1 {
		t.Errorf("quiet cluster %+v", h)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}
