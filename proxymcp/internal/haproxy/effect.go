package haproxy

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// What a change does to traffic depends on the live state, not on the
// command: draining one server of three moves its share to the others,
// draining the last one stops the backend. The reads below (read-only
// commands, and HAProxy's own configuration file) tell a planner which.

// RotationServer is one server of a backend as traffic sees it.
type RotationServer struct {
	Name   string
	Backup bool
	Status string // UP, DOWN, MAINT, DRAIN, NOLB, no check, UP 1/2...
	Weight int64  // effective weight
}

// Serving reports whether the server takes new requests now: up (or
// unchecked) with a weight above 0. DRAIN, MAINT, NOLB and DOWN servers
// and weight-0 servers take none.
func (s RotationServer) Serving() bool {
	return (strings.HasPrefix(s.Status, "UP") || s.Status == "no check") && s.Weight > 0
}

// Rotation reads the servers of backend (statistics; names are matched
// exactly, as HAProxy matches them). A backend that does not exist is a
// *NotFoundError.
func (c *Client) Rotation(ctx context.Context, backend string) ([]RotationServer, error) {
	rows, _, err := c.statCSV(ctx)
	if err != nil {
		return nil, err
	}
	var out []RotationServer
	found := false
	for _, r := range rows {
		if r.Str("pxname") != backend {
			continue
		}
		switch r.Type() {
		case "backend":
			found = true
		case "server":
			out = append(out, RotationServer{Name: r.Str("svname"), Backup: r.Int("bck") > 0, Status: r.Str("status"), Weight: r.Int("weight")})
		}
	}
	if !found {
		return nil, &NotFoundError{What: "backend", Name: backend}
	}
	return out, nil
}

// PatternUse says whether a map's or ACL's entries decide how requests
// are routed or denied, from the configuration lines that use it.
type PatternUse struct {
	// Routes: a line using it routes, denies, redirects or otherwise
	// decides a request's fate; true when that cannot be told (Known false).
	Routes bool
	Known  bool
	// Why names the lines that route or deny (Routes and Known), says why
	// they could not be read (Routes, not Known), or why nothing routes.
	Why string
}

// usedBy finds "used by map|acl at file 'F' line N" (or, for an inline
// ACL, "acl 'src' file 'F' line N") in "show map|acl" descriptions.
var usedBy = regexp.MustCompile(`file '([^']+)' line (\d+)`)

// harmless are the only directives whose use of a map or ACL leaves
// routing and access alone: they add or remove response headers.
var harmless = regexp.MustCompile(`^(http-response|http-after-response)\s+(set-header|add-header|del-header)\b`)

// PatternUse reads which configuration lines use the map or ACL ref. The
// configuration is read through /proc from HAProxy's pid (see
// StatePersistence), so this needs proxymcp on HAProxy's host; otherwise
// the answer is "unknown", which counts as routing.
func (c *Client) PatternUse(ctx context.Context, kind MapKind, ref string) (PatternUse, error) {
	lists, err := c.ListPatterns(ctx, kind)
	if err != nil {
		return PatternUse{}, err
	}
	var desc []string
	for _, l := range lists {
		if l.Ref == ref || l.File == ref || "#"+strconv.FormatInt(l.ID, 10) == ref {
			desc = append(desc, l.Description)
		}
	}
	if len(desc) == 0 {
		return PatternUse{}, &NotFoundError{What: string(kind), Name: ref}
	}
	unknown := func(why string) (PatternUse, error) {
		return PatternUse{Routes: true, Why: "unknown whether it routes or denies requests: " + why}, nil
	}
	info, err := c.ShowInfo(ctx)
	if err != nil {
		return unknown(err.Error())
	}
	pid, _ := info["Pid"].(int64)
	if pid <= 0 {
		return unknown("HAProxy did not report its pid")
	}
	proc := "/proc/" + strconv.FormatInt(pid, 10)
	var deciding, other []string
	for _, d := range desc {
		m := usedBy.FindStringSubmatch(d)
		if m == nil {
			return unknown(fmt.Sprintf("HAProxy does not say which configuration line uses it (%q)", d))
		}
		n, _ := strconv.Atoi(m[2])
		// As HAProxy sees the file (its root and working directory), else
		// as named: a chroot whose paths are also host paths.
		path := filepath.Join(proc, "root", m[1])
		if !filepath.IsAbs(m[1]) {
			path = filepath.Join(proc, "cwd", m[1])
		}
		if _, err := os.Stat(path); err != nil && filepath.IsAbs(m[1]) {
			path = m[1]
		}
		uses, err := configUses(path, n, kind)
		if err != nil {
			return unknown(fmt.Sprintf("cannot read HAProxy's configuration %s (%v)", m[1], err))
		}
		for _, u := range uses {
			where := fmt.Sprintf("%s line %d: %s", filepath.Base(m[1]), u.n, u.text)
			if harmless.MatchString(u.text) {
				other = append(other, where)
			} else {
				deciding = append(deciding, where)
			}
		}
	}
	switch {
	case len(deciding) > 0:
		return PatternUse{Routes: true, Known: true, Why: strings.Join(deciding, "; ")}, nil
	case len(other) > 0:
		return PatternUse{Known: true, Why: "it only sets response headers (" + strings.Join(other, "; ") + ")"}, nil
	}
	return PatternUse{Known: true, Why: "no rule of the configuration uses it"}, nil
}

type configLine struct {
	n    int
	text string
}

// configUses returns the lines of the configuration file that act on the
// pattern declared at line n: that line itself when it is not a named
// "acl" (a map converter or an inline ACL), else every line of the same
// section whose condition names the ACL.
func configUses(path string, n int, kind MapKind) ([]configLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := s.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		lines = append(lines, strings.TrimSpace(line))
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if n < 1 || n > len(lines) {
		return nil, fmt.Errorf("it has no line %d", n)
	}
	decl := strings.Fields(lines[n-1])
	if kind == KindMap || len(decl) < 2 || decl[0] != "acl" {
		return []configLine{{n, lines[n-1]}}, nil
	}
	name := decl[1]
	// The section around line n: from its header to the next one.
	start, end := n-1, n
	for start > 0 && !sectionHeader(lines[start-1]) {
		start--
	}
	for end < len(lines) && !sectionHeader(lines[end]) {
		end++
	}
	var uses []configLine
	for i := start; i < end; i++ {
		f := strings.Fields(lines[i])
		if len(f) == 0 || f[0] == "acl" {
			continue
		}
		cond := false
		for _, w := range f {
			if w == "if" || w == "unless" {
				cond = true
				continue
			}
			if cond && strings.TrimLeft(w, "!") == name {
				uses = append(uses, configLine{i + 1, lines[i]})
				break
			}
		}
	}
	return uses, nil
}

var sectionKeywords = map[string]bool{
	"global": true, "defaults": true, "frontend": true, "backend": true, "listen": true, "peers": true,
	"resolvers": true, "userlist": true, "program": true, "http-errors": true, "ring": true, "cache": true,
	"mailers": true, "log-forward": true, "crt-store": true, "traces": true,
}

// sectionHeader reports whether a trimmed line starts a section. Lines
// are trimmed, so a keyword is enough: none of these is also a directive
// inside a section.
func sectionHeader(line string) bool {
	f := strings.Fields(line)
	return len(f) > 0 && sectionKeywords[f[0]]
}
