package haproxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The views below read, with read-only commands only, the state a change
// touches, for its dry run and its approval preview. Each has a
// Fingerprint: the part an approval depends on, re-read before an approved
// change runs. Volatile figures (sessions, counters) stay out of it.

// Target names the HAProxy a change goes to: the runtime API as a URL
// (unix:///path or tcp://host:port), or the stats page when the runtime
// API is disabled.
func (c *Client) Target() string {
	switch {
	case c.Runtime != nil && c.Runtime.Network == "unix":
		return "unix://" + c.Runtime.Address
	case c.Runtime != nil:
		return "tcp://" + c.Runtime.Address
	case c.Stats != nil:
		return c.Stats.URL
	}
	return "no HAProxy configured"
}

// ServerView is one server as a preview describes it.
type ServerView struct {
	Backend  string `json:"backend"`
	Server   string `json:"server"`
	Address  string `json:"address"`
	Port     int64  `json:"port"`
	Admin    string `json:"admin_state"` // ready, drain or maint (forced by an operator)
	Status   string `json:"status"`      // UP, DOWN, MAINT, DRAIN, NOLB, no check...
	Weight   int64  `json:"weight"`
	Sessions int64  `json:"current_sessions"`
	Maxconn  int64  `json:"maxconn"` // 0: unlimited
	// HealthCheck and AgentCheck are "enabled", "disabled" or "not configured";
	// empty when the runtime API could not be asked.
	HealthCheck string `json:"health_check,omitempty"`
	AgentCheck  string `json:"agent_check,omitempty"`
	CheckPort   int64  `json:"check_port,omitempty"`
	AgentAddr   string `json:"agent_address,omitempty"`
	AgentPort   int64  `json:"agent_port,omitempty"`
}

// Name is backend/server.
func (v ServerView) Name() string { return srv(v.Backend, v.Server) }

// Endpoint is address:port.
func (v ServerView) Endpoint() string {
	if v.Port == 0 {
		return v.Address
	}
	return fmtHostPort(v.Address, v.Port)
}

func fmtHostPort(addr string, port int64) string {
	if strings.Contains(addr, ":") {
		return "[" + addr + "]:" + strconv.FormatInt(port, 10)
	}
	return addr + ":" + strconv.FormatInt(port, 10)
}

// Fingerprint is what an approval of a change to this server depends on:
// that it exists, at the same address, in the same administrative state.
func (v ServerView) Fingerprint() string {
	return fmt.Sprintf("server %s exists at %s, admin state %s", v.Name(), v.Endpoint(), v.Admin)
}

func checkName(bits int64) string {
	switch {
	case bits&checkConfigured == 0:
		return "not configured"
	case bits&checkEnabled != 0:
		return "enabled"
	}
	return "disabled"
}

// ServerView reads one server: statistics (runtime API or stats page) and,
// when the runtime API answers, its "show servers state" row.
func (c *Client) ServerView(ctx context.Context, backend, server string) (ServerView, error) {
	d, _, err := c.GetServer(ctx, backend, server)
	if err != nil {
		return ServerView{}, err
	}
	v := ServerView{Backend: backend, Server: server, Address: d.Address, Port: d.Port, Status: d.Status,
		Weight: d.Weight, Sessions: d.CurrentSessions, Maxconn: d.SessionLimit}
	v.Admin = "ready"
	switch {
	case strings.HasPrefix(d.Status, "MAINT"):
		v.Admin = "maint"
	case strings.HasPrefix(d.Status, "DRAIN"):
		v.Admin = "drain"
	}
	if st := d.State; st != nil {
		v.Admin = adminStateName(intField(st, "srv_admin_state"))
		if a, _ := st["srv_addr"].(string); a != "" {
			v.Address = a
		}
		if p := intField(st, "srv_port"); p != 0 {
			v.Port = p
		}
		v.HealthCheck = checkName(intField(st, "srv_check_state"))
		v.AgentCheck = checkName(intField(st, "srv_agent_state"))
		v.CheckPort = intField(st, "srv_check_port")
		v.AgentAddr, _ = st["srv_agent_addr"].(string)
		v.AgentPort = intField(st, "srv_agent_port")
	}
	return v, nil
}

// ServerExists reports whether backend/server exists (statistics).
func (c *Client) ServerExists(ctx context.Context, backend, server string) (bool, error) {
	_, _, err := c.GetServer(ctx, backend, server)
	var nf *NotFoundError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &nf) && nf.What == "server":
		return false, nil
	}
	return false, err
}

// FrontendView is one frontend as a preview describes it.
type FrontendView struct {
	Name     string `json:"frontend"`
	Status   string `json:"status"` // OPEN, PAUSED (STOP), ...
	Sessions int64  `json:"current_sessions"`
	Maxconn  int64  `json:"maxconn"`
}

// Fingerprint: the frontend exists, open or paused.
func (v FrontendView) Fingerprint() string {
	return "frontend " + v.Name + " exists, status " + v.Status
}

// FrontendView reads one frontend's statistics row.
func (c *Client) FrontendView(ctx context.Context, frontend string) (FrontendView, error) {
	rows, _, err := c.statCSV(ctx)
	if err != nil {
		return FrontendView{}, err
	}
	for _, r := range rows {
		if r.Str("pxname") == frontend && r.Str("svname") == "FRONTEND" {
			return FrontendView{Name: frontend, Status: r.Str("status"), Sessions: r.Int("scur"), Maxconn: r.Int("slim")}, nil
		}
	}
	return FrontendView{}, &NotFoundError{What: "frontend", Name: frontend}
}

// PatternView is one map or ACL as a preview describes it.
type PatternView struct {
	Kind    MapKind        `json:"kind"`
	Ref     string         `json:"ref"`
	Version string         `json:"version,omitempty"` // curr_ver, when HAProxy says it
	Count   int            `json:"entry_count"`
	Entries []PatternEntry `json:"-"`
	Digest  string         `json:"digest"` // of the keys and values, in order
}

// Fingerprint: the same version with the same entries.
func (v PatternView) Fingerprint() string {
	return fmt.Sprintf("%s %s version %s, %d entries, digest %s", v.Kind, v.Ref, v.Version, v.Count, v.Digest)
}

// Lookup returns the value of key in a map view: HAProxy prints entries
// unescaped, so a key with spaces is matched against the whole line.
func (v PatternView) Lookup(key string) (value string, found bool) {
	for _, e := range v.Entries {
		if e.Key == key {
			return e.Value, true
		}
		if line := e.Key + " " + e.Value; strings.HasPrefix(line, key+" ") {
			return line[len(key)+1:], true
		}
	}
	return "", false
}

var currVer = regexp.MustCompile(`curr_ver=(\d+)`)

// PatternView reads one map's or ACL's entries and version.
func (c *Client) PatternView(ctx context.Context, kind MapKind, ref string) (PatternView, error) {
	v := PatternView{Kind: kind, Ref: ref}
	lists, err := c.ListPatterns(ctx, kind)
	if err != nil {
		return v, err
	}
	for _, l := range lists {
		if l.Ref == ref || l.File == ref || "#"+strconv.FormatInt(l.ID, 10) == ref {
			if m := currVer.FindStringSubmatch(l.Description); m != nil {
				v.Version = m[1]
			}
		}
	}
	v.Entries, err = c.ShowPatterns(ctx, kind, ref)
	if err != nil {
		return v, err
	}
	v.Count = len(v.Entries)
	h := sha256.New()
	for _, e := range v.Entries {
		fmt.Fprintf(h, "%q %q\n", e.Key, e.Value)
	}
	v.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	return v, nil
}

// SessionView is one stream as a preview describes it.
type SessionView struct {
	ID       string `json:"session_id"`
	Frontend string `json:"frontend"`
	Backend  string `json:"backend,omitempty"`
	Server   string `json:"server,omitempty"`
	Source   string `json:"source,omitempty"`
}

// SessionView finds one stream in "show sess".
func (c *Client) SessionView(ctx context.Context, id string) (SessionView, error) {
	all, err := c.Sessions(ctx, "", "", "")
	if err != nil {
		return SessionView{}, err
	}
	for _, s := range all {
		if strings.EqualFold(s.ID, id) {
			return SessionView{ID: s.ID, Frontend: s.Frontend, Backend: s.Backend, Server: s.Server, Source: s.Source}, nil
		}
	}
	return SessionView{}, &NotFoundError{What: "session", Name: id}
}
