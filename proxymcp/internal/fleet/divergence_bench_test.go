package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

// BenchmarkStatItemsDiverge is the part of a 16-instance fleet show_stat
// after the answers arrived, without HAProxy: 16 answers of 213 rows
// (the fixture's and 200 servers) are described and compared. Every
// server's address differs between instances, as in
// BenchmarkFleetShowStatLatency, so every server is a divergence.
func BenchmarkStatItemsDiverge(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "haproxy", "testdata", "show_stat.txt"))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	addrCol := slices.Index(strings.Split(strings.TrimPrefix(lines[0], "# "), ","), "addr")
	var server []string
	for _, l := range lines {
		if strings.HasPrefix(l, "be_app,app1,") {
			server = strings.Split(l, ",")
		}
	}
	if addrCol < 0 || server == nil {
		b.Fatal("fixture has no addr column or no be_app/app1")
	}
	names := make([]string, 16)
	answers := make([][]haproxy.StatRow, 16)
	for n := range names {
		names[n] = fmt.Sprintf("lb%d", n+1)
		var sb strings.Builder
		sb.WriteString(strings.Join(lines, "\n") + "\n")
		for i := 1; i <= 200; i++ {
			row := slices.Clone(server)
			row[1] = fmt.Sprintf("big%04d", i)
			row[addrCol] = fmt.Sprintf("127.0.0.1:%d", 20000+100*n+i%4)
			sb.WriteString("be_big," + strings.Join(row[1:], ",") + "\n")
		}
		if answers[n], err = haproxy.ParseStatCSV([]byte(sb.String())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		items := make(map[string][]Item, len(names))
		for n, name := range names {
			items[name] = StatItems(answers[n])
		}
		if ds := Diverge(names, items); len(ds) < 200 {
			b.Fatalf("%d divergences, want every server", len(ds))
		}
	}
}
