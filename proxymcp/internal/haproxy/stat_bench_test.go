package haproxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigStat is a "show stat" answer shaped like the fleet benchmark's (the
// fixture's rows, then 200 servers of be_big), as the runtime API returns it.
func bigStat(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "show_stat.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	text := string(b)
	var server string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "be_app,app1,") {
			server = strings.TrimPrefix(line, "be_app,app1,")
		}
	}
	if server == "" {
		tb.Fatal("fixture has no be_app/app1 row")
	}
	var sb strings.Builder
	sb.WriteString(strings.TrimRight(text, "\n") + "\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&sb, "be_big,big%04d,%s\n", i, server)
	}
	sb.WriteString("\n")
	return sb.String()
}

// BenchmarkParseStatCSV parses one 213-row answer, the unit of work a fleet
// show_stat repeats per instance.
func BenchmarkParseStatCSV(b *testing.B) {
	text := bigStat(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		rows, err := parseStat(text)
		if err != nil || len(rows) != 213 {
			b.Fatal(len(rows), err)
		}
	}
}
