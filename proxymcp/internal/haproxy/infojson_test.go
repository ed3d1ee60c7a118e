package haproxy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// infoTexts are "show info" answers infoJSON must encode exactly as
// json.Marshal does: captured ones, and values with every character
// encoding/json escapes.
func infoTexts(t testing.TB) []string {
	texts := []string{
		"Name: HAProxy\nVersion: 3.2.0\nPid: 12\n",
		"Quote: a\"b\nBackslash: a\\b\nHtml: <a href='x'>&amp;</a>\nTab: a\tb\nCtl: a\x01b\n",
		"Utf8: café ✓\nInvalid: a\xffb\nSep: a\u2028b\u2029c\nEmpty:\nNeg: -42\nBig: 9223372036854775807\nHuge: 9223372036854775808\n",
		"K\"ey: 1\n<k>: x\nk\xff: y\n: skipped\nno colon here\n",
		"Plus: +5\nZeros: 007\nSign: -\nSigns: +-1\nSpace:  5\nTrail: 5 \nUnder: 1_000\nHex: 0x10\nDup: 1\nDup: x\nBare:\n  Spaced  : 3\r\nCR: 4\r\nlast: 9",
		"",
	}
	paths, _ := filepath.Glob("testdata/show_info.txt")
	more, _ := filepath.Glob("testdata/*/show_info.txt")
	if len(paths)+len(more) < 2 {
		t.Fatal("no captured show info answers in testdata")
	}
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	return texts
}

func TestInfoJSONIsMarshal(t *testing.T) {
	for _, text := range infoTexts(t) {
		checkInfoJSON(t, text)
	}
	// A value ParseInfo never makes takes the general way.
	odd := map[string]any{"a": 1.5, "b": []int{1}}
	got, err := infoJSON(odd)
	want, _ := json.Marshal(odd)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("infoJSON(%v) = %s, %v; json.Marshal %s", odd, got, err, want)
	}
}

func checkInfoJSON(t *testing.T, text string) {
	t.Helper()
	fields := ParseInfo(text)
	if want := parseInfoSplit(text); !reflect.DeepEqual(fields, want) {
		t.Errorf("%q: ParseInfo %#v, the reading by strings.Split and ParseInt %#v", text, fields, want)
	}
	got, err := infoJSON(fields)
	want, werr := json.Marshal(fields)
	if err != nil || werr != nil || !bytes.Equal(got, want) {
		t.Errorf("%q:\ninfoJSON     %s (%v)\njson.Marshal %s (%v)", text, got, err, want, werr)
	}
}

// parseInfoSplit is ParseInfo as it was written first (every line split
// out, every value tried by ParseInt): what ParseInfo must keep reading.
func parseInfoSplit(text string) map[string]any {
	out := map[string]any{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			if k, ok2 := strings.CutSuffix(strings.TrimSpace(line), ":"); ok2 && k != "" {
				out[k] = ""
			}
			continue
		}
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		} else {
			out[k] = v
		}
	}
	return out
}

func FuzzInfoJSONIsMarshal(f *testing.F) {
	for _, text := range infoTexts(f) {
		f.Add(text)
	}
	f.Fuzz(checkInfoJSON)
}

// BenchmarkInfoDecode is what one "show info" exchange costs to decode for
// show_info: the parse and the JSON every caller sharing it writes.
func BenchmarkInfoDecode(b *testing.B) {
	raw, err := os.ReadFile("testdata/show_info.txt")
	if err != nil {
		b.Fatal(err)
	}
	text := string(raw)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := infoDecoder.Decode(text); err != nil {
			b.Fatal(err)
		}
	}
}
