package persist

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

// Server is one server's state that a reload may keep or lose.
type Server struct {
	Backend string `json:"backend"`
	Server  string `json:"server"`
	Admin   string `json:"admin_state"` // ready, drain, maint
	Weight  int    `json:"weight"`
	Addr    string `json:"address"`
	Port    int    `json:"port"`
}

func (s Server) name() string { return s.Backend + "/" + s.Server }

// ParseServersState reads "show servers state" (or a server-state file).
func ParseServersState(text string) []Server {
	var out []Server
	for _, row := range haproxy.ParseTable(text) {
		str := func(k string) string { v, _ := row[k].(string); return v }
		num := func(k string) int {
			switch v := row[k].(type) {
			case int64:
				return int(v)
			case string:
				n, _ := strconv.Atoi(v)
				return n
			}
			return 0
		}
		out = append(out, Server{
			Backend: str("be_name"), Server: str("srv_name"),
			Admin:  haproxy.AdminStateName(int64(num("srv_admin_state"))),
			Weight: num("srv_uweight"), Addr: str("srv_addr"), Port: num("srv_port"),
		})
	}
	return out
}

// ConfigServer is a "server" line of the configuration.
type ConfigServer struct {
	Server
	// AddrIsIP: the configuration names the server by IP address. HAProxy
	// (measured on 2.6, 3.0 and 3.2) then takes the port from the state
	// file on reload but not the address.
	AddrIsIP bool `json:"address_is_ip"`
}

// ParseConfigServers reads the "server" lines of backend and listen
// sections: address, port, "weight" and "disabled". It knows only what a
// server line says (not default-server or server-template): enough to say
// what a reload without a state file restores.
func ParseConfigServers(cfg string) []ConfigServer {
	var out []ConfigServer
	section := ""
	s := bufio.NewScanner(strings.NewReader(cfg))
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := s.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			section = ""
			if (f[0] == "backend" || f[0] == "listen") && len(f) > 1 {
				section = f[1]
			}
			continue
		}
		if section == "" || f[0] != "server" || len(f) < 3 {
			continue
		}
		cs := ConfigServer{Server: Server{Backend: section, Server: f[1], Admin: "ready", Weight: 1}}
		host, port, err := net.SplitHostPort(f[2])
		if err != nil {
			host = f[2]
		}
		cs.Addr = host
		cs.Port, _ = strconv.Atoi(port)
		cs.AddrIsIP = net.ParseIP(host) != nil
		for i := 3; i < len(f); i++ {
			switch f[i] {
			case "weight":
				if i+1 < len(f) {
					cs.Weight, _ = strconv.Atoi(f[i+1])
				}
			case "disabled":
				cs.Admin = "maint"
			}
		}
		out = append(out, cs)
	}
	return out
}

// Change is one value a reload would not keep.
type Change struct {
	Kind   string `json:"kind"`   // "server", "map", "acl"
	Object string `json:"object"` // "be_app/app1", or the map/ACL file
	// Field: admin_state, weight, address, port; a map's key; an ACL's pattern.
	Field    string `json:"field"`
	Runtime  string `json:"runtime"`   // "" when absent at run time
	OnReload string `json:"on_reload"` // "" when the files do not have it
	Note     string `json:"note,omitempty"`
}

// NoteIPAddress explains an address change a state file cannot carry.
const NoteIPAddress = "would not survive: the configuration names this server by IP address, and HAProxy restores the port from the server-state file on reload but not the address; change the address in the configuration"

// DiffServers lists what a reload would lose of runtime's server states.
// state is the server-state file's content as it is now (nil when no state
// file is configured and loaded); config the configuration's server lines.
func DiffServers(runtime []Server, state []Server, stateLoaded bool, config []ConfigServer) []Change {
	cfg := map[string]ConfigServer{}
	for _, c := range config {
		cfg[c.name()] = c
	}
	st := map[string]Server{}
	for _, s := range state {
		st[s.name()] = s
	}
	var out []Change
	for _, rt := range runtime {
		c, inConfig := cfg[rt.name()]
		if !inConfig {
			out = append(out, Change{Kind: "server", Object: rt.name(), Field: "server", Runtime: "present", Note: "not in the configuration (added at run time?): a reload removes it; add a server line to keep it"})
			continue
		}
		want := c.Server
		ipNote := false
		if s, ok := st[rt.name()]; ok && stateLoaded {
			want.Admin, want.Weight, want.Port = s.Admin, s.Weight, s.Port
			if c.AddrIsIP {
				ipNote = s.Addr != c.Addr || rt.Addr != c.Addr
			} else {
				want.Addr = s.Addr
			}
		}
		add := func(field, rtv, rlv, note string) {
			if rtv != rlv {
				out = append(out, Change{Kind: "server", Object: rt.name(), Field: field, Runtime: rtv, OnReload: rlv, Note: note})
			}
		}
		add("admin_state", rt.Admin, want.Admin, "")
		add("weight", strconv.Itoa(rt.Weight), strconv.Itoa(want.Weight), "")
		note := ""
		if ipNote {
			note = NoteIPAddress
		}
		add("address", rt.Addr, want.Addr, note)
		if want.Port != 0 || c.Port != 0 {
			add("port", strconv.Itoa(rt.Port), strconv.Itoa(want.Port), "")
		}
	}
	return out
}

// DiffEntries lists the map keys or ACL patterns whose runtime values
// differ from the file's. For a map, values of one key are compared in
// order; for an ACL, the presence of each pattern.
func DiffEntries(kind, file string, runtime, files []Entry) []Change {
	group := func(es []Entry) (map[string][]string, []string) {
		m := map[string][]string{}
		var order []string
		for _, e := range es {
			if _, ok := m[e.Key]; !ok {
				order = append(order, e.Key)
			}
			m[e.Key] = append(m[e.Key], e.Value)
		}
		return m, order
	}
	rt, rtOrder := group(runtime)
	fl, flOrder := group(files)
	keys := rtOrder
	for _, k := range flOrder {
		if _, ok := rt[k]; !ok {
			keys = append(keys, k)
		}
	}
	var out []Change
	for _, k := range keys {
		if slices.Equal(rt[k], fl[k]) {
			continue
		}
		c := Change{Kind: kind, Object: file, Field: k}
		if kind == "acl" {
			c.Runtime, c.OnReload = presence(len(rt[k])), presence(len(fl[k]))
		} else {
			c.Runtime, c.OnReload = strings.Join(rt[k], " | "), strings.Join(fl[k], " | ")
		}
		out = append(out, c)
	}
	return out
}

func presence(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "present"
	}
	return fmt.Sprintf("present %d times", n)
}
