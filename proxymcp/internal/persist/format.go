package persist

import (
	"fmt"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

// StateFile is the server-state file content for the runtime's "show
// servers state" answer: HAProxy reads exactly that format (version line,
// "# " header, one line per server).
func StateFile(showServersState string) ([]byte, error) {
	body := strings.TrimLeft(showServersState, "\n")
	first, _, _ := strings.Cut(body, "\n")
	if strings.TrimSpace(first) != "1" {
		return nil, fmt.Errorf("\"show servers state\" answered with format %q, not version 1 that this proxymcp writes; nothing was written", first)
	}
	if !strings.Contains(body, "\n# be_id") {
		return nil, fmt.Errorf("\"show servers state\" answered without its header line; nothing was written")
	}
	return []byte(strings.TrimRight(body, "\n") + "\n"), nil
}

// MapFile is a map file for the runtime's "show map <file>" answer, one
// "<key> <value>" line per entry, in the runtime's order (which is the
// order of first match for map lookups that scan). Comments are not kept.
func MapFile(showMap string) ([]byte, error) {
	var b strings.Builder
	for _, e := range haproxy.ParsePatternEntries(showMap, true) {
		if err := fileSafe(e.Key, "map key"); err != nil {
			return nil, err
		}
		if e.Key == "" {
			return nil, fmt.Errorf("a map entry has an empty key; HAProxy's map file format cannot hold it; nothing was written")
		}
		b.WriteString(e.Key)
		if e.Value != "" {
			b.WriteString(" " + e.Value)
		}
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}

// ACLFile is an ACL file for the runtime's "show acl <file>" answer, one
// pattern per line.
func ACLFile(showACL string) ([]byte, error) {
	var b strings.Builder
	for _, e := range haproxy.ParsePatternEntries(showACL, false) {
		if err := fileSafe(e.Key, "ACL pattern"); err != nil {
			return nil, err
		}
		b.WriteString(e.Key + "\n")
	}
	return []byte(b.String()), nil
}

// fileSafe refuses what HAProxy would read back differently: a leading "#"
// is a comment, leading or trailing blanks are trimmed, a control
// character would split or corrupt the line.
func fileSafe(s, what string) error {
	switch {
	case strings.HasPrefix(s, "#"):
		return fmt.Errorf("the %s %q starts with '#', which the file would read back as a comment; remove or rename that entry at run time, then persist again; nothing was written", what, s)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("the %s %q starts or ends with a blank, which HAProxy trims when it reads the file; nothing was written", what, s)
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("the %s %q contains a control character; nothing was written", what, s)
	}
	return nil
}

// Entry is one line of a map or ACL file (Value empty for ACLs).
type Entry struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

// ParsePatternFile reads a map (isMap) or ACL file as HAProxy loads it:
// blank lines and "#" comments skipped, blanks around trimmed; a map line's
// key is its first word and its value the rest.
func ParsePatternFile(content string, isMap bool) []Entry {
	var out []Entry
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !isMap {
			out = append(out, Entry{Key: line})
			continue
		}
		k, v := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			k, v = line[:i], line[i+1:]
		}
		out = append(out, Entry{Key: k, Value: strings.TrimSpace(v)})
	}
	return out
}

// RuntimeEntries reads "show map" / "show acl" answers into Entries.
func RuntimeEntries(show string, isMap bool) []Entry {
	var out []Entry
	for _, e := range haproxy.ParsePatternEntries(show, isMap) {
		out = append(out, Entry{Key: e.Key, Value: e.Value})
	}
	return out
}
