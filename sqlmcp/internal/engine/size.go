package engine

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// jsonSize returns the length of v encoded by encoding/json, for the values
// JSONValue produces, without encoding it: the byte cap is checked on every
// row, and encoding each row twice would double the work of a result.
func jsonSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 4
	case bool:
		if x {
			return 4
		}
		return 5
	case string:
		return stringSize(x)
	case int64:
		var b [24]byte
		return len(strconv.AppendInt(b[:0], x, 10))
	case int:
		var b [24]byte
		return len(strconv.AppendInt(b[:0], int64(x), 10))
	case int32:
		var b [24]byte
		return len(strconv.AppendInt(b[:0], int64(x), 10))
	case float64:
		// As encoding/json formats floats: 'f' in [1e-6, 1e21), else 'e'
		// with a one-digit negative exponent unpadded.
		var b [32]byte
		format := byte('f')
		if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
			format = 'e'
		}
		out := strconv.AppendFloat(b[:0], x, format, -1, 64)
		n := len(out)
		if format == 'e' && n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			n--
		}
		return n
	case json.Number:
		return len(x)
	case json.RawMessage:
		return len(x)
	case []any:
		n := 2 + max(len(x)-1, 0)
		for _, e := range x {
			n += jsonSize(e)
		}
		return n
	case map[string]any:
		n := 2 + max(len(x)-1, 0)
		for k, e := range x {
			n += stringSize(k) + 1 + jsonSize(e)
		}
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// stringSize is the encoded length of s: quotes plus escapes as
// encoding/json writes them (control characters, quote, backslash, the
// HTML-sensitive <, > and &, U+2028/U+2029 and invalid UTF-8).
func stringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
