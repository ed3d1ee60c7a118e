package fleet_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// BenchmarkFleetShowStat reads show_stat from 1, 4 and 16 real HAProxy
// processes with 200 servers each (plus the standard test backends), and
// computes the divergence over every row, as fleet show_stat does below the
// MCP layer. Asked concurrently, the time should follow the slowest
// instance, not the sum: the log line gives the 16/1 ratio (target <= 2x).
//
//	go test -run XXX -bench BenchmarkFleetShowStat -benchtime 100x ./proxymcp/internal/fleet/
func BenchmarkFleetShowStat(b *testing.B) {
	needHAProxy(b)
	opts := make([]haproxytest.Options, 16)
	for i := range opts {
		opts[i] = haproxytest.Options{BigServers: 200}
	}
	hs := startFleet(b, opts...)
	f, names := newFleet(b, hs)
	members := f.Members()
	var pids []int
	for _, h := range hs {
		pids = append(pids, pidOf(b, h))
	}
	perOp := map[string]time.Duration{}
	showStat := func(ctx context.Context, c *haproxy.Client) (haproxy.StatTable, haproxy.Source, error) {
		return c.ShowStat(ctx, haproxy.StatFilter{})
	}
	for _, v := range []struct {
		name string
		n    int
		// one after the other: the sum, for comparison
		sequential bool
	}{{"instances=1", 1, false}, {"instances=4", 4, false}, {"instances=16", 16, false}, {"sequential/instances=16", 16, true}} {
		n := v.n
		b.Run(v.name, func(b *testing.B) {
			ctx := context.Background()
			rows := 0
			hp0, self0 := cpuOf(pids[:n]), selfCPU()
			start := time.Now()
			for b.Loop() {
				var ans []fleet.Answer[haproxy.StatTable]
				var err error
				if v.sequential {
					for _, m := range members[:n] {
						a, aerr := fleet.Read(ctx, []fleet.Member{m}, showStat)
						ans, err = append(ans, a...), aerr
					}
				} else {
					ans, err = fleet.Read(ctx, members[:n], showStat)
				}
				if err != nil {
					b.Fatal(err)
				}
				items := map[string][]fleet.Item{}
				rows = 0
				for _, a := range ans {
					if a.Err != nil {
						b.Fatal(a.Err)
					}
					rows += len(a.Value.Rows)
					items[a.Instance] = fleet.StatItems(a.Value.Rows)
				}
				_ = fleet.Diverge(names[:n], items)
			}
			perOp[v.name] = time.Since(start) / time.Duration(b.N)
			b.ReportMetric(float64(rows), "rows/op")
			// CPU spent per call by the HAProxy processes and by this
			// process: on a machine with fewer cores than instances, their
			// sum over the core count is a floor no concurrency removes.
			b.ReportMetric(float64(cpuOf(pids[:n])-hp0)/float64(b.N)/1e6, "haproxy_cpu_ms/op")
			b.ReportMetric(float64(selfCPU()-self0)/float64(b.N)/1e6, "client_cpu_ms/op")
		})
	}
	if perOp["instances=1"] > 0 && perOp["instances=16"] > 0 {
		b.Logf("show_stat per call: 1 instance %s, 4 instances %s, 16 instances %s (one after the other: %s); 16/1 = %.2fx (target <= 2x), %d CPUs",
			perOp["instances=1"], perOp["instances=4"], perOp["instances=16"], perOp["sequential/instances=16"],
			float64(perOp["instances=16"])/float64(perOp["instances=1"]), runtime.NumCPU())
	}
}

// pidOf returns the HAProxy's pid as it reports it.
func pidOf(b *testing.B, h *haproxytest.HAProxy) int {
	out, err := h.Exec(context.Background(), "show info")
	if err != nil {
		b.Fatal(err)
	}
	pid, _ := haproxy.ParseInfo(out)["Pid"].(int64)
	return int(pid)
}

// cpuOf sums the user and system CPU time of processes (/proc/<pid>/stat,
// fields 14 and 15, in clock ticks of 10 ms).
func cpuOf(pids []int) time.Duration {
	var ticks int64
	for _, p := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			continue
		}
		s := string(raw)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + k
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
