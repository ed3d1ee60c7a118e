package engine

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trinodb/trino-go-client/trino"
)

// unboundedLength is the length Trino reports for varchar without a bound.
const unboundedLength = 2147483647

// TypeName returns the Trino type of a result column in Trino's own
// lower-case spelling, with its parameters: varchar(25), decimal(12,2),
// timestamp(3) with time zone, array(varchar), ...
func TypeName(t *sql.ColumnType) string {
	base := strings.ToLower(t.DatabaseTypeName())
	switch base {
	case "varchar", "char":
		if n, ok := t.Length(); ok && n > 0 && n != unboundedLength {
			return base + "(" + strconv.FormatInt(n, 10) + ")"
		}
	case "decimal":
		if p, s, ok := t.DecimalSize(); ok {
			return "decimal(" + strconv.FormatInt(p, 10) + "," + strconv.FormatInt(s, 10) + ")"
		}
	case "time", "timestamp", "time with time zone", "timestamp with time zone":
		if p, _, ok := t.DecimalSize(); ok {
			kind, zone, _ := strings.Cut(base, " ")
			if zone != "" {
				return kind + "(" + strconv.FormatInt(p, 10) + ") " + zone
			}
			return kind + "(" + strconv.FormatInt(p, 10) + ")"
		}
	}
	return base
}

// converter turns a value scanned from the driver into its JSON-ready form.
type converter func(any) any

// newConverter picks the conversion for a column of Trino type typ.
func newConverter(typ string) converter {
	base, params, _ := strings.Cut(typ, "(")
	switch base {
	case "date":
		return func(v any) any {
			if t, ok := v.(time.Time); ok {
				return t.Format("2006-01-02")
			}
			return JSONValue(v)
		}
	case "timestamp", "time":
		prec := 3
		if p, _, ok := strings.Cut(params, ")"); ok {
			if n, err := strconv.Atoi(p); err == nil {
				prec = n
			}
		}
		layout := "15:04:05"
		if base == "timestamp" {
			layout = "2006-01-02T15:04:05"
		}
		if prec > 0 {
			layout += "." + strings.Repeat("0", min(prec, 9))
		}
		if strings.Contains(typ, "with time zone") {
			layout += "Z07:00"
		}
		return func(v any) any {
			if t, ok := v.(time.Time); ok {
				return t.Format(layout)
			}
			return JSONValue(v)
		}
	}
	return JSONValue
}

// JSONValue converts one value from the driver into a value that encodes to
// JSON without losing its type: integers stay integers, decimals are exact
// strings (as the driver returns them), NaN and infinities become the
// strings "NaN", "Infinity", "-Infinity", binary becomes base64, dates and
// times ISO 8601, and arrays, maps and rows are converted element by element
// (rows become objects keyed by field name, or arrays when unnamed).
func JSONValue(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64, int32, int, json.Number:
		return x
	case float64:
		return floatValue(x)
	case float32:
		return floatValue(float64(x))
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = JSONValue(e)
		}
		return out
	case trino.Row:
		if !x.Valid && x.Len() == 0 {
			return nil
		}
		named := true
		for i := 0; i < x.Len(); i++ {
			if x.Name(i) == "" {
				named = false
			}
		}
		if named {
			out := make(map[string]any, x.Len())
			for i := 0; i < x.Len(); i++ {
				out[x.Name(i)] = JSONValue(x.Value(i))
			}
			return out
		}
		out := make([]any, x.Len())
		for i := 0; i < x.Len(); i++ {
			out[i] = JSONValue(x.Value(i))
		}
		return out
	case *trino.Row:
		if x == nil {
			return nil
		}
		return JSONValue(*x)
	default:
		// Anything else the driver may hand back keeps its JSON form.
		b, err := json.Marshal(x)
		if err != nil {
			return nil
		}
		return json.RawMessage(b)
	}
}

func floatValue(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}
