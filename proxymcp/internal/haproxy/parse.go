package haproxy

import (
	"net"
	"strconv"
	"strings"
)

// ParseInfo parses "show info": "Key: value" lines; numbers become int64.
func ParseInfo(text string) map[string]any {
	out := make(map[string]any, 64) // "show info" has about 60 fields
	for rest, more := text, true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
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
		if mayBeInt(v) {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
				continue
			}
		}
		out[k] = v
	}
	return out
}

// mayBeInt reports whether strconv.ParseInt(s, 10, 64) can succeed: a sign
// and digits only. Most "show info" values that are not numbers are told
// so here, without the error ParseInt allocates.
func mayBeInt(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseTable parses space-separated output with a "# a b c" header line, as
// "show servers state" and "show servers conn" print it. Lines before the
// header (the format version) are skipped. Integer cells become int64.
func ParseTable(text string) []map[string]any {
	var header []string
	var rows []map[string]any
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			header = strings.Fields(strings.TrimPrefix(line, "#"))
			continue
		}
		if header == nil {
			continue
		}
		fields := strings.Fields(line)
		row := make(map[string]any, len(header))
		for i := 0; i < len(header) && len(fields) > 0; i++ {
			name := header[i]
			// "idle_per_thr[2]" (show servers conn): one value per thread,
			// as a list under "idle_per_thr".
			if base, n, ok := arrayColumn(name); ok {
				vals := make([]any, 0, n)
				for ; n > 0 && len(fields) > 0; n-- {
					vals = append(vals, cell(base, fields[0]))
					fields = fields[1:]
				}
				row[base] = vals
				continue
			}
			f := fields[0]
			fields = fields[1:]
			if name == "-" { // a separator column, as in "show servers conn"
				continue
			}
			row[name] = cell(name, f)
		}
		rows = append(rows, row)
	}
	return rows
}

// cell types one table value: integers become int64, except in name and
// address columns.
func cell(column, v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && !strings.HasSuffix(column, "_name") && column != "srv_addr" {
		return n
	}
	return v
}

// arrayColumn reads a "name[N]" header: N values follow under name.
func arrayColumn(h string) (string, int, bool) {
	base, rest, ok := strings.Cut(h, "[")
	num, closed := strings.CutSuffix(rest, "]")
	if !ok || !closed || base == "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > 4096 {
		return "", 0, false
	}
	return base, n, true
}

// PatternList is one map or ACL as "show map" / "show acl" lists it.
type PatternList struct {
	ID          int64  `json:"id"`
	Ref         string `json:"ref"`  // what to pass as map/acl: the file when there is one, else #id
	File        string `json:"file"` // empty for inline ACLs
	Description string `json:"description"`
	EntryCount  int64  `json:"entry_count"`
}

// ParsePatternLists parses "show map" / "show acl" without argument.
func ParsePatternLists(text string) []PatternList {
	var out []PatternList
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		idStr, rest, _ := strings.Cut(line, " ")
		id, err := strconv.ParseInt(idStr, 10, 64)
		if err != nil {
			continue
		}
		p := PatternList{ID: id, Ref: "#" + idStr}
		if strings.HasPrefix(rest, "(") {
			if end := strings.Index(rest, ") "); end >= 0 {
				p.File = rest[1:end]
				rest = rest[end+2:]
			} else if strings.HasSuffix(rest, ")") {
				p.File = rest[1 : len(rest)-1]
				rest = ""
			}
		}
		if p.File != "" {
			p.Ref = p.File
		}
		p.Description = rest
		if i := strings.Index(rest, "entry_cnt="); i >= 0 {
			n := rest[i+len("entry_cnt="):]
			if j := strings.IndexByte(n, ' '); j >= 0 {
				n = n[:j]
			}
			p.EntryCount, _ = strconv.ParseInt(n, 10, 64)
		}
		out = append(out, p)
	}
	return out
}

// PatternEntry is one map or ACL entry.
type PatternEntry struct {
	EntryID string `json:"entry_id"` // HAProxy's reference, usable as #<ref> in del
	Key     string `json:"key"`
	Value   string `json:"value,omitempty"` // maps only
}

// ParsePatternEntries parses "show map <m>" ("<ref> <key> <value>") and
// "show acl <a>" ("<ref> <pattern>"). Keys never contain spaces in
// HAProxy's print-out? They can (stored whole), so for maps the value is
// the last field only when hasValue is false; see the comment below.
func ParsePatternEntries(text string, isMap bool) []PatternEntry {
	var out []PatternEntry
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		ref, rest, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(ref, "0x") {
			continue
		}
		e := PatternEntry{EntryID: ref}
		if isMap {
			// HAProxy prints "<ref> <key> <value>" without escaping, so a
			// key with spaces is ambiguous; keys are usually words, values
			// (like backend names or redirect targets) may have spaces, so
			// the first space separates key and value.
			e.Key, e.Value, _ = strings.Cut(rest, " ")
		} else {
			e.Key = rest
		}
		out = append(out, e)
	}
	return out
}

// ParseKeyValues parses "a=b, c=\"d\"" lines (get map / get acl) into a map.
func ParseKeyValues(text string) map[string]any {
	out := map[string]any{}
	text = strings.TrimSpace(text)
	for len(text) > 0 {
		k, rest, ok := strings.Cut(text, "=")
		if !ok {
			break
		}
		k = strings.TrimSpace(strings.TrimLeft(k, ", "))
		var v string
		if strings.HasPrefix(rest, "\"") {
			// Quoted value: up to the next quote followed by ", " or the end.
			end := strings.Index(rest[1:], "\", ")
			if end < 0 {
				v = strings.TrimSuffix(rest[1:], "\"")
				rest = ""
			} else {
				v = rest[1 : end+1]
				rest = rest[end+3:]
			}
		} else {
			v, rest, _ = strings.Cut(rest, ", ")
		}
		if _, dup := out[k]; !dup {
			out[k] = v
		}
		text = rest
	}
	return out
}

// TableInfo is one stick table from "show table".
type TableInfo struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
	Used int64  `json:"used"`
}

// ParseTableList parses "# table: be_app, type: ip, size:102400, used:0" lines.
func ParseTableList(text string) []TableInfo {
	var out []TableInfo
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "# table:") {
			continue
		}
		var t TableInfo
		for _, part := range strings.Split(strings.TrimPrefix(line, "# "), ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), ":")
			v = strings.TrimSpace(v)
			switch strings.TrimSpace(k) {
			case "table":
				t.Name = v
			case "type":
				t.Type = v
			case "size":
				t.Size, _ = strconv.ParseInt(v, 10, 64)
			case "used":
				t.Used, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out = append(out, t)
	}
	return out
}

// ParseTableEntries parses "0x...: key=1.2.3.4 use=0 exp=1 gpc0=0 ..." lines.
func ParseTableEntries(text string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "0x") {
			continue
		}
		ptr, rest, _ := strings.Cut(line, ": ")
		e := map[string]any{"entry_id": ptr}
		for _, f := range strings.Fields(rest) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && k != "key" {
				e[k] = n
			} else {
				e[k] = v
			}
		}
		out = append(out, e)
	}
	return out
}

// Session is one stream from "show sess".
type Session struct {
	ID       string         `json:"id"`
	Frontend string         `json:"frontend"`
	Backend  string         `json:"backend"`
	Server   string         `json:"server"`
	Source   string         `json:"source"`
	Fields   map[string]any `json:"fields"`
}

// ParseSessions parses "show sess" one-line summaries.
func ParseSessions(text string) []Session {
	var out []Session
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "0x") {
			continue
		}
		id, rest, _ := strings.Cut(line, ": ")
		s := Session{ID: id, Fields: map[string]any{}}
		for _, f := range strings.Fields(rest) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			switch k {
			case "fe":
				s.Frontend = v
			case "be":
				s.Backend = v
			case "srv":
				s.Server = v
			case "src":
				s.Source = v
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				s.Fields[k] = n
			} else {
				s.Fields[k] = v
			}
		}
		out = append(out, s)
	}
	return out
}

// splitAddr splits "127.0.0.1:19001" (or "[::1]:80") into address and port.
func splitAddr(a string) (string, int64) {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return a, 0
	}
	p, _ := strconv.ParseInt(port, 10, 64)
	return host, p
}
