package trinotest

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
)

// Estimates in EXPLAIN (TYPE IO, FORMAT JSON), the way Trino writes them:
// each input table's estimate has outputRowCount and outputSizeInBytes, and
// an unknown figure is NaN, which Trino's JSON (Jackson) writes as the
// string "NaN"; the plan's own estimate is its output's.
//
// What is approximated: the row count is DuckDB's estimated cardinality of
// the table scan (after filters DuckDB pushes into the scan, as Trino's
// cost-based estimate does after pushed-down predicates); the size is that
// row count times a fixed width per column type of the whole table (Trino
// counts only the columns read, from connector statistics). Tables marked
// with SetNoStatistics have unknown (NaN) estimates, as tables of a
// connector without statistics do on Trino; information_schema inputs are
// unknown too.

// estFloat is an estimate written as Trino writes it: NaN as "NaN".
type estFloat float64

func (f estFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte(`"NaN"`), nil
	}
	return json.Marshal(v)
}

var noStats sync.Map // *Server → map[string]bool of "catalog.schema.table"

// SetNoStatistics makes EXPLAIN (TYPE IO) estimate the named table
// ("catalog.schema.table") as unknown, like a table without statistics.
func (s *Server) SetNoStatistics(table string) {
	m, _ := noStats.LoadOrStore(s, &sync.Map{})
	m.(*sync.Map).Store(strings.ToLower(table), true)
}

func (s *Server) hasNoStatistics(t ioTable) bool {
	m, ok := noStats.Load(s)
	if !ok {
		return false
	}
	_, no := m.(*sync.Map).Load(strings.ToLower(t.Catalog + "." + t.SchemaTable.Schema + "." + t.SchemaTable.Table))
	return no
}

// typeWidth is the bytes per value assumed for a DuckDB column type.
func typeWidth(duckType string) float64 {
	t := strings.ToUpper(duckType)
	switch {
	case t == "BOOLEAN" || t == "TINYINT":
		return 1
	case t == "SMALLINT":
		return 2
	case t == "INTEGER" || t == "FLOAT" || t == "DATE":
		return 4
	case t == "BIGINT" || t == "DOUBLE" || strings.HasPrefix(t, "TIMESTAMP") || strings.HasPrefix(t, "TIME"):
		return 8
	case strings.HasPrefix(t, "DECIMAL") || t == "HUGEINT" || t == "UUID":
		return 16
	default: // VARCHAR, BLOB, nested types
		return 32
	}
}

// rowWidth is the assumed bytes of one row of the table.
func (s *Server) rowWidth(ctx context.Context, t ioTable) float64 {
	rows, err := s.db.QueryContext(ctx, "SELECT data_type FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? AND table_name = ?",
		t.Catalog, t.SchemaTable.Schema, t.SchemaTable.Table)
	if err != nil {
		return math.NaN()
	}
	defer rows.Close()
	var w float64
	for rows.Next() {
		var typ string
		if rows.Scan(&typ) == nil {
			w += typeWidth(typ)
		}
	}
	if w == 0 {
		return math.NaN()
	}
	return w
}

// inputEstimate is the estimate of reading rows (DuckDB's cardinality; <0
// unknown) from t.
func (s *Server) inputEstimate(ctx context.Context, t ioTable, rows float64) ioEstimate {
	if rows < 0 || t.SchemaTable.Schema == "information_schema" || s.hasNoStatistics(t) {
		nan := estFloat(math.NaN())
		return ioEstimate{OutputRowCount: nan, OutputSizeInBytes: nan, CPUCost: nan, MaxMemory: 0, NetworkCost: 0}
	}
	size := rows * s.rowWidth(ctx, t)
	return ioEstimate{OutputRowCount: estFloat(rows), OutputSizeInBytes: estFloat(size), CPUCost: estFloat(size), MaxMemory: 0, NetworkCost: 0}
}
