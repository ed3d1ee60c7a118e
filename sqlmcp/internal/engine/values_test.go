package engine

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestConverters(t *testing.T) {
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456789, zone)
	tests := []struct {
		typ  string
		in   any
		want string
	}{
		{"bigint", int64(9007199254740993), `9007199254740993`},
		{"double", 1.5, `1.5`},
		{"double", math.NaN(), `"NaN"`},
		{"real", math.Inf(1), `"Infinity"`},
		{"double", math.Inf(-1), `"-Infinity"`},
		{"decimal(38,10)", "12345678901234567890.0123456789", `"12345678901234567890.0123456789"`},
		{"varbinary", []byte{0xab, 0xcd}, `"q80="`},
		{"date", ts, `"2024-02-29"`},
		{"timestamp(3)", ts, `"2024-02-29T13:14:15.123"`},
		{"timestamp(0)", ts, `"2024-02-29T13:14:15"`},
		{"timestamp(9)", ts, `"2024-02-29T13:14:15.123456789"`},
		{"timestamp(6) with time zone", ts, `"2024-02-29T13:14:15.123456-03:30"`},
		{"time(3)", ts, `"13:14:15.123"`},
		{"varchar", nil, `null`},
		{"timestamp(3)", nil, `null`},
		{"array(double)", []any{json.Number("1.25"), nil, "NaN"}, `[1.25,null,"NaN"]`},
		{"map(varchar, array(bigint))", map[string]any{"k": []any{json.Number("1")}}, `{"k":[1]}`},
		{"json", `{"a":1}`, `"{\"a\":1}"`},
		{"array(timestamp(3))", []any{ts}, `["2024-02-29T13:14:15.123456789-03:30"]`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(newConverter(tt.typ)(tt.in))
		if err != nil {
			t.Errorf("%s %v: %v", tt.typ, tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s %v = %s, want %s", tt.typ, tt.in, got, tt.want)
		}
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"t", []string{"t"}},
		{"s.t", []string{"s", "t"}},
		{"c.s.t", []string{"c", "s", "t"}},
		{`"a.b"."c ""d"""`, []string{"a.b", `c "d"`}},
		{` Sales . Orders `, []string{"Sales", "Orders"}},
	}
	for _, tt := range tests {
		got, err := SplitName(tt.in)
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("SplitName(%q) = %q, %v", tt.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("SplitName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		}
	}
	for _, bad := range []string{"", "a.", ".a", "a..b", `"a`, `"a"b`, `a"b`} {
		if got, err := SplitName(bad); err == nil {
			t.Errorf("SplitName(%q) = %q, want an error", bad, got)
		}
	}
}

func TestQuoting(t *testing.T) {
	if got := QualifiedName("c", `we"ird.s`, "t t"); got != `"c"."we""ird.s"."t t"` {
		t.Errorf("QualifiedName = %s", got)
	}
	if got := QuoteString("it's"); got != `'it''s'` {
		t.Errorf("QuoteString = %s", got)
	}
}

func TestHeaderSanitising(t *testing.T) {
	if got := clientTag("user:a,b\r\nX: y"); got != "user:a_b  X: y" {
		t.Errorf("clientTag = %q", got)
	}
}

func TestJSONSizeMatchesEncoding(t *testing.T) {
	values := []any{
		nil, true, false, int64(-9007199254740993), 42, int32(7), 0.1, 1e21, 1.5e-7, -0.0, 123456.789,
		"plain", "quote \" back \\ nl \n tab \t", "<b>&amp;</b>", "ctrl \x01\x1f", "naïve ✓ 日本", "bad \xff utf8", "sep \u2028 \u2029",
		json.Number("12.50"), []any{int64(1), "a", nil, []any{}}, map[string]any{"k": "v", "n": nil, "é": []any{true}},
		[]any{map[string]any{}}, "",
	}
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonSize(v); got != len(b) {
			t.Errorf("jsonSize(%#v) = %d, encoding is %d bytes: %s", v, got, len(b), b)
		}
	}
}
