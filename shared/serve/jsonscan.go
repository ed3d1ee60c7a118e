package serve

import "bytes"

// The stdio gate looks at every line in and out for a request's id and
// method. Decoding each line with encoding/json, on top of mcp-go's own
// decoding, was a fifth of the cost of a ping; topFields finds the top-level
// members of an object by scanning bytes, without allocating. It handles the
// plain case only (keys of printable ASCII without escapes) and says so: the
// callers fall back to encoding/json for anything else, so behaviour stays
// exactly encoding/json's.

// topField is one top-level member: its key and the raw text of its value.
type topField struct{ key, val []byte }

// maxTopFields bounds the members topFields reports; an object with more
// goes to the slow path (JSON-RPC messages have four or five).
const maxTopFields = 8

// topFields splits a JSON object into its top-level members, in order. ok is
// false when msg is not an object this scanner can read exactly (a key with
// an escape or a byte outside printable ASCII, too many members, or text it
// cannot scan): the caller then uses encoding/json. It does not validate
// values; callers that need valid JSON check json.Valid first.
func topFields(msg []byte, out *[maxTopFields]topField) (n int, ok bool) {
	i := skipWS(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return 0, false
	}
	i = skipWS(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return 0, skipWS(msg, i+1) == len(msg)
	}
	for {
		if i >= len(msg) || msg[i] != '"' || n == maxTopFields {
			return 0, false
		}
		k := i + 1
		for k < len(msg) && msg[k] != '"' {
			if c := msg[k]; c == '\\' || c < 0x20 || c >= 0x7f {
				return 0, false
			}
			k++
		}
		if k >= len(msg) {
			return 0, false
		}
		key := msg[i+1 : k]
		i = skipWS(msg, k+1)
		if i >= len(msg) || msg[i] != ':' {
			return 0, false
		}
		i = skipWS(msg, i+1)
		end, good := skipValue(msg, i)
		if !good {
			return 0, false
		}
		out[n] = topField{key: key, val: msg[i:end]}
		n++
		i = skipWS(msg, end)
		if i >= len(msg) {
			return 0, false
		}
		switch msg[i] {
		case ',':
			i = skipWS(msg, i+1)
		case '}':
			return n, skipWS(msg, i+1) == len(msg)
		default:
			return 0, false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]: a string,
// or an object or array (nesting counted, strings inside skipped), or a
// literal or number (up to the next delimiter).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default:
		j := i
	scan:
		for ; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				break scan
			}
		}
		return j, j > i
	}
}

// skipString returns the end of the string starting at b[i] (a quote).
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// plainString returns the content of a JSON string value without escapes,
// or ok false (not a string, or it has escapes: use encoding/json).
func plainString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}
