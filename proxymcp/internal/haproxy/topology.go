package haproxy

import (
	"context"
	"strings"
)

// Frontend is one frontend from the statistics.
type Frontend struct {
	Name            string `json:"name"`
	Status          string `json:"status"`
	Mode            string `json:"mode,omitempty"`
	CurrentSessions int64  `json:"current_sessions"`
	MaxSessions     int64  `json:"max_sessions"`
	SessionLimit    int64  `json:"session_limit"`
	TotalSessions   int64  `json:"total_sessions"`
	BytesIn         int64  `json:"bytes_in"`
	BytesOut        int64  `json:"bytes_out"`
	RequestRate     int64  `json:"request_rate"`
	RequestsTotal   int64  `json:"requests_total"`
}

// Backend is one backend from the statistics.
type Backend struct {
	Name            string `json:"name"`
	Status          string `json:"status"`
	Mode            string `json:"mode,omitempty"`
	Algorithm       string `json:"algorithm,omitempty"`
	ActiveServers   int64  `json:"active_servers"`
	BackupServers   int64  `json:"backup_servers"`
	Servers         int    `json:"servers"`
	Weight          int64  `json:"weight"`
	CurrentSessions int64  `json:"current_sessions"`
	TotalSessions   int64  `json:"total_sessions"`
	QueueCurrent    int64  `json:"queue_current"`
	BytesIn         int64  `json:"bytes_in"`
	BytesOut        int64  `json:"bytes_out"`
	Downtime        int64  `json:"downtime_seconds"`
}

// Server is one server from the statistics.
type Server struct {
	Backend         string `json:"backend"`
	Name            string `json:"name"`
	ID              int64  `json:"id"`
	Address         string `json:"address"`
	Port            int64  `json:"port"`
	Status          string `json:"status"`
	Weight          int64  `json:"weight"`
	Active          bool   `json:"active"`
	Backup          bool   `json:"backup"`
	CheckStatus     string `json:"check_status,omitempty"`
	CheckCode       int64  `json:"check_code,omitempty"`
	CheckDesc       string `json:"check_desc,omitempty"`
	LastCheck       string `json:"last_check,omitempty"`
	AgentStatus     string `json:"agent_status,omitempty"`
	LastAgent       string `json:"last_agent,omitempty"`
	CurrentSessions int64  `json:"current_sessions"`
	MaxSessions     int64  `json:"max_sessions"`
	SessionLimit    int64  `json:"session_limit,omitempty"`
	TotalSessions   int64  `json:"total_sessions"`
	QueueCurrent    int64  `json:"queue_current"`
	BytesIn         int64  `json:"bytes_in"`
	BytesOut        int64  `json:"bytes_out"`
	CheckFailures   int64  `json:"check_failures"`
	Downtime        int64  `json:"downtime_seconds"`
	LastChange      int64  `json:"last_change_seconds"`
}

func frontendOf(r StatRow) Frontend {
	return Frontend{Name: r.Str("pxname"), Status: r.Str("status"), Mode: r.Str("mode"),
		CurrentSessions: r.Int("scur"), MaxSessions: r.Int("smax"), SessionLimit: r.Int("slim"),
		TotalSessions: r.Int("stot"), BytesIn: r.Int("bin"), BytesOut: r.Int("bout"),
		RequestRate: r.Int("req_rate"), RequestsTotal: r.Int("req_tot")}
}

func backendOf(r StatRow) Backend {
	return Backend{Name: r.Str("pxname"), Status: r.Str("status"), Mode: r.Str("mode"), Algorithm: r.Str("algo"),
		ActiveServers: r.Int("act"), BackupServers: r.Int("bck"), Weight: r.Int("weight"),
		CurrentSessions: r.Int("scur"), TotalSessions: r.Int("stot"), QueueCurrent: r.Int("qcur"),
		BytesIn: r.Int("bin"), BytesOut: r.Int("bout"), Downtime: r.Int("downtime")}
}

func serverOf(r StatRow) Server {
	addr, port := splitAddr(r.Str("addr"))
	return Server{Backend: r.Str("pxname"), Name: r.Str("svname"), ID: r.Int("sid"), Address: addr, Port: port,
		Status: r.Str("status"), Weight: r.Int("weight"), Active: r.Int("act") == 1, Backup: r.Int("bck") == 1,
		CheckStatus: strings.TrimPrefix(r.Str("check_status"), "* "), CheckCode: r.Int("check_code"),
		CheckDesc: r.Str("check_desc"), LastCheck: r.Str("last_chk"), AgentStatus: strings.TrimPrefix(r.Str("agent_status"), "* "),
		LastAgent: r.Str("last_agt"), CurrentSessions: r.Int("scur"), MaxSessions: r.Int("smax"),
		SessionLimit: r.Int("slim"), TotalSessions: r.Int("stot"), QueueCurrent: r.Int("qcur"),
		BytesIn: r.Int("bin"), BytesOut: r.Int("bout"), CheckFailures: r.Int("chkfail"),
		Downtime: r.Int("downtime"), LastChange: r.Int("lastchg")}
}

// StatFilter selects statistics rows; empty fields match everything.
type StatFilter struct {
	Text   string // matches proxy name, server name or type
	Proxy  string
	Type   string // frontend, backend, server, listener
	Server string
}

func (f StatFilter) match(r StatRow) bool {
	if f.Text != "" && !strings.EqualFold(r.Str("pxname"), f.Text) && !strings.EqualFold(r.Str("svname"), f.Text) && r.Type() != strings.ToLower(f.Text) {
		return false
	}
	if f.Proxy != "" && r.Str("pxname") != f.Proxy {
		return false
	}
	if f.Type != "" && r.Type() != f.Type {
		return false
	}
	if f.Server != "" && r.Str("svname") != f.Server {
		return false
	}
	return true
}

// ShowStat returns the statistics rows matching f, filtered on our side,
// with every column; StatTable.Columns narrows them.
func (c *Client) ShowStat(ctx context.Context, f StatFilter) (StatTable, Source, error) {
	rows, src, err := c.statCSV(ctx)
	if err != nil {
		return StatTable{}, src, err
	}
	t := StatTable{Rows: rows[:0:0]}
	if len(rows) > 0 {
		t.h = rows[0].h
	}
	if f == (StatFilter{}) {
		t.Rows = rows
		return t, src, nil
	}
	for _, r := range rows {
		if f.match(r) {
			t.Rows = append(t.Rows, r)
		}
	}
	return t, src, nil
}

// ListFrontends returns every frontend.
func (c *Client) ListFrontends(ctx context.Context) ([]Frontend, Source, error) {
	rows, src, err := c.statCSV(ctx)
	if err != nil {
		return nil, src, err
	}
	out := []Frontend{}
	for _, r := range rows {
		if r.Type() == "frontend" {
			out = append(out, frontendOf(r))
		}
	}
	return out, src, nil
}

// ListBackends returns every backend (listen sections included).
func (c *Client) ListBackends(ctx context.Context) ([]Backend, Source, error) {
	rows, src, err := c.statCSV(ctx)
	if err != nil {
		return nil, src, err
	}
	count := map[string]int{}
	for _, r := range rows {
		if r.Type() == "server" {
			count[r.Str("pxname")]++
		}
	}
	out := []Backend{}
	for _, r := range rows {
		if r.Type() == "backend" {
			b := backendOf(r)
			b.Servers = count[b.Name]
			out = append(out, b)
		}
	}
	return out, src, nil
}

// BackendDetail is a backend with its servers.
type BackendDetail struct {
	Backend
	ServerList []Server `json:"server_list"`
}

// GetBackend returns one backend's totals and servers.
func (c *Client) GetBackend(ctx context.Context, name string) (BackendDetail, Source, error) {
	rows, src, err := c.statCSV(ctx)
	if err != nil {
		return BackendDetail{}, src, err
	}
	var d BackendDetail
	found := false
	d.ServerList = []Server{}
	for _, r := range rows {
		if r.Str("pxname") != name {
			continue
		}
		switch r.Type() {
		case "backend":
			d.Backend, found = backendOf(r), true
		case "server":
			d.ServerList = append(d.ServerList, serverOf(r))
		}
	}
	if !found {
		return d, src, &NotFoundError{What: "backend", Name: name}
	}
	d.Servers = len(d.ServerList)
	return d, src, nil
}

// ListServers returns the servers of one backend, or of all when backend is "".
func (c *Client) ListServers(ctx context.Context, backend string) ([]Server, Source, error) {
	rows, src, err := c.statCSV(ctx)
	if err != nil {
		return nil, src, err
	}
	out := []Server{}
	found := backend == ""
	for _, r := range rows {
		if backend != "" && r.Str("pxname") != backend {
			continue
		}
		switch r.Type() {
		case "backend":
			found = true
		case "server":
			out = append(out, serverOf(r))
		}
	}
	if !found {
		return nil, src, &NotFoundError{What: "backend", Name: backend}
	}
	return out, src, nil
}

// ServerDetail is one server's statistics and, from the runtime API, its
// saved state row.
type ServerDetail struct {
	Server
	State map[string]any `json:"state,omitempty"`
}

// GetServer returns one server.
func (c *Client) GetServer(ctx context.Context, backend, server string) (ServerDetail, Source, error) {
	rows, src, err := c.statCSV(ctx)
	if err != nil {
		return ServerDetail{}, src, err
	}
	backendFound := false
	for _, r := range rows {
		if r.Str("pxname") != backend {
			continue
		}
		if r.Type() == "backend" {
			backendFound = true
		}
		if r.Type() == "server" && r.Str("svname") == server {
			d := ServerDetail{Server: serverOf(r)}
			if src == SourceRuntime {
				if out, err := c.exec(ctx, "show servers state "+backend); err == nil {
					for _, st := range ParseTable(out) {
						if st["srv_name"] == server {
							d.State = st
						}
					}
				}
			}
			return d, src, nil
		}
	}
	if !backendFound {
		return ServerDetail{}, src, &NotFoundError{What: "backend", Name: backend}
	}
	return ServerDetail{}, src, &NotFoundError{What: "server", Name: backend + "/" + server}
}
