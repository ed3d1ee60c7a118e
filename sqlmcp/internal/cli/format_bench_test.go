package cli

import (
	"io"
	"strconv"
	"testing"
)

// BenchmarkPrinters measures the per-row cost of each output format on a
// 10,000-row result of mixed types: the CLI's hot path while a long result
// streams in.
func BenchmarkPrinters(b *testing.B) {
	rows := make([][]any, 10_000)
	for i := range rows {
		rows[i] = []any{int64(i), "name " + strconv.Itoa(i), "12.50", float64(i) / 3, nil, []any{"a", "b"}, i%2 == 0}
	}
	for _, f := range formatNames {
		b.Run(f, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p := newPrinter(f, io.Discard, false)
				p.Columns(sampleCols[:6])
				for _, r := range rows {
					p.Row(r[:6])
				}
				p.End(Summary{RowCount: len(rows)})
			}
		})
	}
}
