// Package jsonscan finds the top-level members of a JSON-RPC message by
// scanning bytes: the one grammar serve's stdio gate and HTTP layers and
// the tasks keeper use to pass over messages that are plainly not theirs.
//
// The stdio gate looks at every line in and out for a request's id and
// method. Decoding each line with encoding/json, on top of mcp-go's own
// decoding, was a fifth of the cost of a ping; TopFields finds the top-level
// members of an object by scanning bytes, without allocating. It handles the
// plain case only (keys of printable ASCII without escapes) and says so: the
// callers fall back to encoding/json for anything else, so behaviour stays
// exactly encoding/json's.
package jsonscan

import "bytes"

// Field is one top-level member: its key and the raw text of its value.
type Field struct{ Key, Val []byte }

// MaxFields bounds the members TopFields reports; an object with more
// goes to the slow path (JSON-RPC messages have four or five).
const MaxFields = 8

// TopFields splits a JSON object into its top-level members, in order. ok is
// false when msg is not an object this scanner can read exactly (a key with
// an escape or a byte outside printable ASCII, too many members, or text it
// cannot scan): the caller then uses encoding/json. It does not validate
// values; callers that need valid JSON check json.Valid first.
func TopFields(msg []byte, out *[MaxFields]Field) (n int, ok bool) {
	i, empty, ok := OpenObject(msg)
	if !ok || empty {
		return 0, ok
	}
	for {
		if n == MaxFields {
			return 0, false
		}
		key, v, ok := MemberKey(msg, i)
		if !ok {
			return 0, false
		}
		end, good := SkipValue(msg, v)
		if !good {
			return 0, false
		}
		out[n] = Field{Key: key, Val: msg[v:end]}
		n++
		next, closed, ok := AfterValue(msg, end)
		if !ok || closed {
			return n, ok
		}
		i = next
	}
}

// OpenObject returns where the first member of the object msg holds
// starts, or empty true for "{}" (ok false: msg is no object, or "{}" with
// text after it).
func OpenObject(msg []byte) (i int, empty, ok bool) {
	i = skipWS(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return 0, false, false
	}
	i = skipWS(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return 0, true, skipWS(msg, i+1) == len(msg)
	}
	return i, false, true
}

// MemberKey reads the key of the member starting at msg[i] and returns it
// with where its value starts; ok is false for a key with an escape or a
// byte outside printable ASCII, or text that is no member.
func MemberKey(msg []byte, i int) (key []byte, value int, ok bool) {
	if i >= len(msg) || msg[i] != '"' {
		return nil, 0, false
	}
	k := i + 1
	for k < len(msg) && msg[k] != '"' {
		if c := msg[k]; c == '\\' || c < 0x20 || c >= 0x7f {
			return nil, 0, false
		}
		k++
	}
	if k >= len(msg) {
		return nil, 0, false
	}
	key = msg[i+1 : k]
	i = skipWS(msg, k+1)
	if i >= len(msg) || msg[i] != ':' {
		return nil, 0, false
	}
	return key, skipWS(msg, i+1), true
}

// AfterValue reads what follows a member's value ending at msg[end]: the
// next member's start, or closed true when the object ends there (ok false
// when anything but white space follows it, or neither , nor }).
func AfterValue(msg []byte, end int) (next int, closed, ok bool) {
	i := skipWS(msg, end)
	if i >= len(msg) {
		return 0, false, false
	}
	switch msg[i] {
	case ',':
		return skipWS(msg, i+1), false, true
	case '}':
		return 0, true, skipWS(msg, i+1) == len(msg)
	}
	return 0, false, false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipValue returns the end of the JSON value starting at b[i]: a string,
// or an object or array (nesting counted, strings inside skipped), or a
// literal or number (up to the next delimiter).
func SkipValue(b []byte, i int) (int, bool) {
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

// Member returns the value of the last of fields named name, or nil when
// none is: in any case when fold, as encoding/json fills a struct, or
// exactly, as it fills a map.
func Member(fields []Field, name string, fold bool) []byte {
	var v []byte
	for _, f := range fields {
		if string(f.Key) == name || fold && bytes.EqualFold(f.Key, []byte(name)) {
			v = f.Val
		}
	}
	return v
}

// PlainString returns the content of a JSON string value without escapes,
// or ok false (not a string, or it has escapes: use encoding/json).
func PlainString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}
