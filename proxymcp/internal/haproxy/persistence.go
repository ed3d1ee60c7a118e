package haproxy

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// AdminStateName names a server's forced administrative state from the
// srv_admin_state bits of "show servers state": maint, drain or ready.
func AdminStateName(bits int64) string { return adminStateName(bits) }

// StatePersistence says whether runtime changes survive a reload: HAProxy
// writes nothing back to its configuration, so a reload restores the
// configured server states unless the global "server-state-file" names a
// file (saved with "show servers state" before the reload) and
// "load-server-state-from-file" loads it.
//
// No runtime API command shows the configuration, so it is read from the
// files HAProxy was started with ("-f"), found through /proc from the pid
// "show info" reports: this works when proxymcp runs on HAProxy's host (or
// shares its pid namespace) with the right to read them. Otherwise Known is
// false and Detail says why.
type StatePersistence struct {
	Known bool `json:"known"`
	// Configured: a state file is named and loaded by at least one section.
	Configured      bool     `json:"configured"`
	ServerStateFile string   `json:"server_state_file,omitempty"`
	ServerStateBase string   `json:"server_state_base,omitempty"`
	LoadedBy        []string `json:"load_server_state_from_file,omitempty"` // e.g. "defaults: global", "backend be_app: local"
	ConfigFiles     []string `json:"config_files,omitempty"`
	Detail          string   `json:"detail"`
}

// StatePersistence reads how this HAProxy keeps runtime changes over a reload.
func (c *Client) StatePersistence(ctx context.Context) (StatePersistence, error) {
	info, err := c.ShowInfo(ctx)
	if err != nil {
		return StatePersistence{}, err
	}
	pid, _ := info["Pid"].(int64)
	return statePersistenceOf(pid), nil
}

func statePersistenceOf(pid int64) StatePersistence {
	unknown := func(why string) StatePersistence {
		return StatePersistence{Detail: "unknown: " + why + "; check by hand that the global section has server-state-file and that defaults or backends have load-server-state-from-file"}
	}
	if pid <= 0 {
		return unknown("HAProxy did not report its pid")
	}
	proc := "/proc/" + strconv.FormatInt(pid, 10)
	raw, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		return unknown(fmt.Sprintf("HAProxy's pid %d is not visible here (proxymcp runs on another host or in another pid namespace)", pid))
	}
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if filepath.Base(args[0]) != "haproxy" {
		return unknown(fmt.Sprintf("pid %d here is not an haproxy process (proxymcp runs in another pid namespace)", pid))
	}
	var paths []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-f" && i+1 < len(args):
			paths = append(paths, args[i+1])
			i++
		case strings.HasPrefix(args[i], "-f") && len(args[i]) > 2 && !strings.HasPrefix(args[i], "-f "):
			paths = append(paths, args[i][2:])
		}
	}
	if len(paths) == 0 {
		return unknown(fmt.Sprintf("haproxy pid %d was not started with -f", pid))
	}
	// Through /proc/<pid>/root and cwd, paths resolve as HAProxy sees them
	// (a chroot, a container's file system).
	type file struct{ host, name string } // the path here, and as HAProxy names it
	var files []file
	for _, p := range paths {
		host := filepath.Join(proc, "root", p)
		if !filepath.IsAbs(p) {
			host = filepath.Join(proc, "cwd", p)
		}
		st, err := os.Stat(host)
		if err != nil {
			return unknown(fmt.Sprintf("cannot read HAProxy's configuration %s (%v)", p, err))
		}
		if st.IsDir() {
			entries, _ := filepath.Glob(filepath.Join(host, "*.cfg"))
			sort.Strings(entries)
			for _, e := range entries {
				files = append(files, file{e, filepath.Join(p, filepath.Base(e))})
			}
		} else {
			files = append(files, file{host, p})
		}
	}
	sp := StatePersistence{Known: true}
	for _, f := range files {
		if err := sp.scan(f.host); err != nil {
			return unknown(fmt.Sprintf("cannot read HAProxy's configuration %s (%v)", f.name, err))
		}
		sp.ConfigFiles = append(sp.ConfigFiles, f.name)
	}
	sp.conclude()
	return sp
}

// conclude decides Configured and says so in Detail.
func (sp *StatePersistence) conclude() {
	switch {
	case sp.ServerStateFile == "" && sp.ServerStateBase == "":
		sp.Detail = "runtime changes are lost on reload: the global section has no server-state-file"
	case len(sp.LoadedBy) == 0:
		sp.Detail = "runtime changes are lost on reload: server-state-file is set but no section has load-server-state-from-file"
	default:
		sp.Configured = true
		sp.Detail = "server states are reloaded from " + strings.TrimSpace(sp.ServerStateBase+" "+sp.ServerStateFile) +
			" when it is written (show servers state) before each reload; maps and ACLs changed at run time are still lost"
	}
}

// scan reads one configuration file's relevant keywords.
func (sp *StatePersistence) scan(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	section := ""
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := s.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "global", "defaults", "frontend", "backend", "listen", "peers", "resolvers", "userlist", "program",
			"http-errors", "ring", "cache", "mailers", "log-forward", "crt-store", "traces":
			if line[0] != ' ' && line[0] != '\t' {
				section = strings.Join(fields, " ")
				continue
			}
		}
		switch {
		case section == "global" && fields[0] == "server-state-file" && len(fields) > 1:
			sp.ServerStateFile = fields[1]
		case section == "global" && fields[0] == "server-state-base" && len(fields) > 1:
			sp.ServerStateBase = fields[1]
		case fields[0] == "load-server-state-from-file" && len(fields) > 1 && fields[1] != "none":
			sp.LoadedBy = append(sp.LoadedBy, section+": "+fields[1])
		}
	}
	return s.Err()
}
