package fleet_test

import (
	"context"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// BenchmarkFleetShowStatLocal reads show_stat from 1, 4 and 16 real
// HAProxy processes with 200 servers each (plus the standard test backends)
// on their Unix sockets, and computes the divergence over every row, as
// fleet show_stat does below the MCP layer. Every instance is a local
// process on the same cores as the benchmark, so on a small machine this
// measures CPU (HAProxy printing, proxymcp parsing), not waiting: see
// BenchmarkFleetShowStatLatency for the fan-out.
//
//	go test -run XXX -bench BenchmarkFleetShowStatLocal -benchtime 100x ./proxymcp/internal/fleet/
func BenchmarkFleetShowStatLocal(b *testing.B) {
	benchFleetShowStat(b, 0)
}

// BenchmarkFleetShowStatLatency is BenchmarkFleetShowStatLocal with every
// instance behind a relay that delivers each chunk 5 ms after it was sent,
// both ways (a 10 ms round trip, like load balancers across a WAN or VPC).
// Asked concurrently, the time should follow the slowest instance, not the
// sum: the log line gives the 16/1 ratio (target <= 2x).
//
//	go test -run XXX -bench BenchmarkFleetShowStatLatency -benchtime 100x ./proxymcp/internal/fleet/
func BenchmarkFleetShowStatLatency(b *testing.B) {
	benchFleetShowStat(b, 5*time.Millisecond)
}

func benchFleetShowStat(b *testing.B, delay time.Duration) {
	needHAProxy(b)
	opts := make([]haproxytest.Options, 16)
	for i := range opts {
		opts[i] = haproxytest.Options{BigServers: 200}
	}
	hs := startFleet(b, opts...)
	f, names := newFleet(b, hs)
	members := f.Members()
	if delay > 0 {
		members = nil
		for i, h := range hs {
			addr := startDelayRelay(b, h.Socket, delay)
			members = append(members, fleet.Member{Name: names[i], ReadTimeout: 10 * time.Second, Client: haproxy.New(
				&runtimeapi.Client{Network: "tcp4", Address: addr, Timeout: 5 * time.Second, MaxConns: 2}, nil)})
		}
		b.Cleanup(func() {
			for _, m := range members {
				_ = m.Client.Runtime.Close()
			}
		})
	}
	var pids []int
	for _, h := range hs {
		pids = append(pids, pidOf(b, h))
	}
	perOp := map[string]time.Duration{}
	showStat := func(ctx context.Context, m fleet.Member) (haproxy.StatTable, haproxy.Source, error) {
		c := m.Client
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
		b.Logf("show_stat per call (one-way delay %s): 1 instance %s, 4 instances %s, 16 instances %s (one after the other: %s); 16/1 = %.2fx (target <= 2x), %d CPUs",
			delay, perOp["instances=1"], perOp["instances=4"], perOp["instances=16"], perOp["sequential/instances=16"],
			float64(perOp["instances=16"])/float64(perOp["instances=1"]), runtime.NumCPU())
	}
}

// startDelayRelay listens on a loopback TCP port and relays each connection
// to the Unix socket target, delivering every chunk read in either
// direction delay after it was read. It is a small fake for what one
// machine cannot show: HAProxy instances on their own hosts, a network
// round trip away. Chunks are pipelined (a delay line, not a sleep per
// read in series), so a long answer costs one delay plus its transfer, as
// over a real link. It returns the address to dial.
func startDelayRelay(tb testing.TB, target string, delay time.Duration) string {
	tb.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("unix", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); delayCopy(out, in, delay) }()
			go func() { defer wg.Done(); delayCopy(in, out, delay) }()
		}
	}()
	return l.Addr().String()
}

// delayCopy copies src to dst, each chunk written delay after it was read;
// when either side ends it closes both, ending the other direction too.
// Chunks are read into buffers that are reused once written on (a free
// list, which unlike a sync.Pool survives garbage collections): the
// relay's CPU is counted as the client's, and a real network costs the
// client none, so the relay copies and allocates nothing itself.
func delayCopy(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		due time.Time
		buf []byte
		n   int
	}
	ch := make(chan chunk, 4096)
	free := make(chan []byte, 64)
	get := func() []byte {
		select {
		case b := <-free:
			return b
		default:
			return make([]byte, 64<<10)
		}
	}
	put := func(b []byte) {
		select {
		case free <- b:
		default:
		}
	}
	go func() {
		defer close(ch)
		for {
			buf := get()
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{time.Now().Add(delay), buf, n}
			} else {
				put(buf)
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.due))
		_, err := dst.Write(c.buf[:c.n])
		put(c.buf)
		if err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
	for range ch {
		// the reader ends on the closed src; let it finish
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
