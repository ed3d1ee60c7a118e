package trinotest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// trinoType is a Trino type: its raw name plus the arguments that Trino puts
// into a column's typeSignature.
type trinoType struct {
	raw    string      // rawType: "varchar", "decimal", "timestamp with time zone", "array", ...
	longs  []int64     // LONG arguments (length, precision, scale)
	elems  []trinoType // TYPE arguments: array element, map key and value
	fields []rowField  // NAMED_TYPE arguments of a row
}

type rowField struct {
	name string
	typ  trinoType
}

// unboundedVarchar is the length Trino reports for an unbounded varchar.
const unboundedVarchar = math.MaxInt32

var (
	typeVarchar = trinoType{raw: "varchar", longs: []int64{unboundedVarchar}}
	typeBigint  = trinoType{raw: "bigint"}
	typeBoolean = trinoType{raw: "boolean"}
)

// String renders the type the way Trino prints it in a column's "type" and in
// DESCRIBE: varchar, decimal(10,2), timestamp(3) with time zone, array(integer),
// map(varchar, bigint), row(a integer, "b c" varchar).
func (t trinoType) String() string {
	switch t.raw {
	case "varchar", "char":
		if len(t.longs) == 1 && t.longs[0] != unboundedVarchar {
			return fmt.Sprintf("%s(%d)", t.raw, t.longs[0])
		}
		return t.raw
	case "decimal":
		return fmt.Sprintf("decimal(%d,%d)", t.longs[0], t.longs[1])
	case "timestamp", "time":
		return fmt.Sprintf("%s(%d)", t.raw, t.longs[0])
	case "timestamp with time zone", "time with time zone":
		base, _, _ := strings.Cut(t.raw, " ")
		return fmt.Sprintf("%s(%d) with time zone", base, t.longs[0])
	case "array":
		return "array(" + t.elems[0].String() + ")"
	case "map":
		return "map(" + t.elems[0].String() + ", " + t.elems[1].String() + ")"
	case "row":
		parts := make([]string, len(t.fields))
		for i, f := range t.fields {
			parts[i] = quoteFieldName(f.name) + " " + f.typ.String()
		}
		return "row(" + strings.Join(parts, ", ") + ")"
	}
	return t.raw
}

// quoteFieldName quotes a row field name when Trino would: anything but a
// plain lower-case identifier.
func quoteFieldName(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// typeSignatureJSON is the wire form of a column's typeSignature.
type typeSignatureJSON struct {
	RawType   string         `json:"rawType"`
	Arguments []typeArgument `json:"arguments"`
}

type typeArgument struct {
	Kind  string `json:"kind"`
	Value any    `json:"value"`
}

type namedType struct {
	FieldName     fieldName         `json:"fieldName"`
	TypeSignature typeSignatureJSON `json:"typeSignature"`
}

type fieldName struct {
	Name string `json:"name"`
}

func (t trinoType) signature() typeSignatureJSON {
	sig := typeSignatureJSON{RawType: t.raw, Arguments: []typeArgument{}}
	for _, l := range t.longs {
		sig.Arguments = append(sig.Arguments, typeArgument{Kind: "LONG", Value: l})
	}
	for _, e := range t.elems {
		sig.Arguments = append(sig.Arguments, typeArgument{Kind: "TYPE", Value: e.signature()})
	}
	for _, f := range t.fields {
		sig.Arguments = append(sig.Arguments, typeArgument{Kind: "NAMED_TYPE", Value: namedType{
			FieldName: fieldName{Name: f.name}, TypeSignature: f.typ.signature(),
		}})
	}
	return sig
}

// columnJSON is one entry of a QueryResults "columns" array.
type columnJSON struct {
	Name          string            `json:"name"`
	Type          string            `json:"type"`
	TypeSignature typeSignatureJSON `json:"typeSignature"`
}

func newColumn(name string, t trinoType) columnJSON {
	return columnJSON{Name: name, Type: t.String(), TypeSignature: t.signature()}
}

// trinoTypeOf maps a DuckDB type name, as duckdb-go reports it
// (DECIMAL(10,2), INTEGER[], STRUCT("a" INTEGER), MAP(VARCHAR, BIGINT)) or as
// information_schema spells it (TIMESTAMP WITH TIME ZONE), to the Trino type
// that the test engine reports.
func trinoTypeOf(duck string) trinoType {
	p := &typeParser{s: duck}
	t := p.parse()
	return t
}

type typeParser struct {
	s   string
	pos int
}

func (p *typeParser) skipSpace() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

func (p *typeParser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

// word reads an identifier (letters, digits, underscores) or a quoted name.
func (p *typeParser) word() string {
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == '"' {
		var b strings.Builder
		p.pos++
		for p.pos < len(p.s) {
			c := p.s[p.pos]
			p.pos++
			if c == '"' {
				if p.pos < len(p.s) && p.s[p.pos] == '"' {
					b.WriteByte('"')
					p.pos++
					continue
				}
				break
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.s[start:p.pos]
}

func (p *typeParser) expect(c byte) {
	if p.peek() == c {
		p.pos++
	}
}

func (p *typeParser) number() int64 {
	n, _ := strconv.ParseInt(p.word(), 10, 64)
	return n
}

func (p *typeParser) parse() trinoType {
	name := strings.ToUpper(p.word())
	// Multi-word names used by information_schema.
	for _, tail := range []string{" WITH TIME ZONE", " PRECISION"} {
		rest := p.s[p.pos:]
		if len(rest) >= len(tail) && strings.EqualFold(rest[:len(tail)], tail) {
			name += tail
			p.pos += len(tail)
		}
	}
	var t trinoType
	switch name {
	case "BOOLEAN", "BOOL":
		t = trinoType{raw: "boolean"}
	case "TINYINT", "INT1":
		t = trinoType{raw: "tinyint"}
	case "SMALLINT", "INT2", "UTINYINT":
		t = trinoType{raw: "smallint"}
	case "INTEGER", "INT", "INT4", "USMALLINT":
		t = trinoType{raw: "integer"}
	case "BIGINT", "INT8", "UINTEGER":
		t = trinoType{raw: "bigint"}
	case "UBIGINT":
		t = trinoType{raw: "decimal", longs: []int64{20, 0}}
	case "HUGEINT", "UHUGEINT", "INT128", "UINT128", "BIGNUM":
		t = trinoType{raw: "decimal", longs: []int64{38, 0}}
	case "FLOAT", "REAL", "FLOAT4":
		t = trinoType{raw: "real"}
	case "DOUBLE", "FLOAT8", "DOUBLE PRECISION":
		t = trinoType{raw: "double"}
	case "DECIMAL", "NUMERIC":
		prec, scale := int64(18), int64(3)
		if p.peek() == '(' {
			p.pos++
			prec = p.number()
			p.expect(',')
			scale = p.number()
			p.expect(')')
		}
		t = trinoType{raw: "decimal", longs: []int64{prec, scale}}
	case "VARCHAR", "TEXT", "STRING", "ENUM", "BIT", "UNION", "CHAR", "BPCHAR":
		if p.peek() == '(' { // VARCHAR(n): DuckDB drops n; UNION(...): shown as text
			p.skipParens()
		}
		t = typeVarchar
	case "BLOB", "BYTEA", "VARBINARY", "GEOMETRY":
		t = trinoType{raw: "varbinary"}
	case "DATE":
		t = trinoType{raw: "date"}
	case "TIME":
		t = trinoType{raw: "time", longs: []int64{6}}
	case "TIMETZ", "TIME WITH TIME ZONE":
		t = trinoType{raw: "time with time zone", longs: []int64{6}}
	case "TIMESTAMP", "DATETIME":
		t = trinoType{raw: "timestamp", longs: []int64{6}}
	case "TIMESTAMP_S":
		t = trinoType{raw: "timestamp", longs: []int64{0}}
	case "TIMESTAMP_MS":
		t = trinoType{raw: "timestamp", longs: []int64{3}}
	case "TIMESTAMP_NS":
		t = trinoType{raw: "timestamp", longs: []int64{9}}
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		t = trinoType{raw: "timestamp with time zone", longs: []int64{6}}
	case "INTERVAL":
		t = trinoType{raw: "interval day to second"}
	case "UUID":
		t = trinoType{raw: "uuid"}
	case "JSON":
		t = trinoType{raw: "json"}
	case "STRUCT", "ROW":
		t = trinoType{raw: "row"}
		p.expect('(')
		for p.peek() != ')' && p.peek() != 0 {
			fname := p.word()
			ft := p.parse()
			t.fields = append(t.fields, rowField{name: fname, typ: ft})
			if p.peek() == ',' {
				p.pos++
			}
		}
		p.expect(')')
	case "MAP":
		p.expect('(')
		k := p.parse()
		p.expect(',')
		v := p.parse()
		p.expect(')')
		t = trinoType{raw: "map", elems: []trinoType{k, v}}
	default:
		t = typeVarchar
		if p.peek() == '(' {
			p.skipParens()
		}
	}
	// Lists (T[]) and fixed-size arrays (T[3]) are both Trino arrays.
	for p.peek() == '[' {
		for p.pos < len(p.s) && p.s[p.pos] != ']' {
			p.pos++
		}
		p.pos++
		t = trinoType{raw: "array", elems: []trinoType{t}}
	}
	return t
}

func (p *typeParser) skipParens() {
	depth := 0
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		p.pos++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return
			}
		}
	}
}

// encodeValue turns a value scanned from DuckDB into the JSON value Trino
// sends for type t: integers as numbers, decimals as exact strings, dates and
// timestamps as strings, varbinary as base64, arrays as arrays, maps as
// objects, rows as arrays of field values.
func encodeValue(t trinoType, v any) any {
	if v == nil {
		return nil
	}
	switch t.raw {
	case "tinyint", "smallint", "integer", "bigint":
		switch n := v.(type) {
		case int8, int16, int32, int64, uint8, uint16, uint32, int, uint:
			return n
		case uint64:
			return n
		}
	case "real", "double":
		var f float64
		switch n := v.(type) {
		case float32:
			f = float64(n)
		case float64:
			f = n
		default:
			return fmt.Sprint(v)
		}
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		}
		if t.raw == "real" {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 32))
		}
		return f
	case "boolean":
		return v
	case "decimal":
		switch n := v.(type) {
		case duckdb.Decimal:
			return formatDecimal(n.Value, int(n.Scale))
		case *big.Int:
			return n.String()
		case uint64:
			return strconv.FormatUint(n, 10)
		}
	case "varbinary":
		if b, ok := v.([]byte); ok {
			return base64.StdEncoding.EncodeToString(b)
		}
	case "uuid":
		if b, ok := v.([]byte); ok && len(b) == 16 {
			return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		}
	case "date":
		if tm, ok := v.(time.Time); ok {
			return tm.Format("2006-01-02")
		}
	case "timestamp":
		if tm, ok := v.(time.Time); ok {
			return tm.UTC().Format("2006-01-02 15:04:05") + fraction(tm, t.longs[0])
		}
	case "timestamp with time zone":
		if tm, ok := v.(time.Time); ok {
			tm = tm.UTC()
			return tm.Format("2006-01-02 15:04:05") + fraction(tm, t.longs[0]) + " UTC"
		}
	case "time":
		if tm, ok := v.(time.Time); ok {
			return tm.Format("15:04:05") + fraction(tm, t.longs[0])
		}
	case "time with time zone":
		if tm, ok := v.(time.Time); ok {
			return tm.Format("15:04:05") + fraction(tm, t.longs[0]) + tm.Format("-07:00")
		}
	case "interval day to second":
		if iv, ok := v.(duckdb.Interval); ok {
			return formatInterval(iv)
		}
	case "json":
		if s, ok := v.(string); ok {
			return s
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	case "array":
		if list, ok := v.([]any); ok {
			out := make([]any, len(list))
			for i, e := range list {
				out[i] = encodeValue(t.elems[0], e)
			}
			return out
		}
	case "map":
		if m, ok := v.(duckdb.OrderedMap); ok {
			keys, vals := m.Keys(), m.Values()
			out := make(map[string]any, len(keys))
			for i, k := range keys {
				out[mapKey(t.elems[0], k)] = encodeValue(t.elems[1], vals[i])
			}
			return out
		}
		if m, ok := v.(duckdb.Map); ok {
			out := make(map[string]any, len(m))
			for k, e := range m {
				out[mapKey(t.elems[0], k)] = encodeValue(t.elems[1], e)
			}
			return out
		}
	case "row":
		if m, ok := v.(map[string]any); ok {
			out := make([]any, len(t.fields))
			for i, f := range t.fields {
				out[i] = encodeValue(f.typ, m[f.name])
			}
			return out
		}
	case "varchar":
		switch s := v.(type) {
		case string:
			return s
		case []byte:
			return string(s)
		}
	}
	return fmt.Sprint(v)
}

// mapKey renders a map key as the JSON object key Trino uses: the text of
// the encoded value.
func mapKey(t trinoType, k any) string {
	switch e := encodeValue(t, k).(type) {
	case string:
		return e
	case nil:
		return "null"
	default:
		return fmt.Sprint(e)
	}
}

// fraction renders the sub-second digits of tm at the given precision,
// including the dot, or "" for precision 0.
func fraction(tm time.Time, precision int64) string {
	if precision <= 0 {
		return ""
	}
	digits := fmt.Sprintf("%09d", tm.Nanosecond())
	if precision < 9 {
		digits = digits[:precision]
	}
	return "." + digits
}

// formatDecimal renders an unscaled value with scale digits after the point
// and no exponent, keeping trailing zeros (12.30), as Trino does.
func formatDecimal(unscaled *big.Int, scale int) string {
	if unscaled == nil {
		return "0"
	}
	neg := unscaled.Sign() < 0
	digits := new(big.Int).Abs(unscaled).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// formatInterval renders an interval like Trino's interval day to second:
// "1 02:03:04.000" (months counted as 30 days).
func formatInterval(iv duckdb.Interval) string {
	micros := iv.Micros + int64(iv.Days)*86400e6 + int64(iv.Months)*30*86400e6
	sign := ""
	if micros < 0 {
		sign = "-"
		micros = -micros
	}
	days := micros / 86400e6
	micros %= 86400e6
	h := micros / 3600e6
	micros %= 3600e6
	m := micros / 60e6
	micros %= 60e6
	s := micros / 1e6
	ms := (micros % 1e6) / 1e3
	return fmt.Sprintf("%s%d %02d:%02d:%02d.%03d", sign, days, h, m, s, ms)
}
