package master

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Proc is one line of "show proc".
type Proc struct {
	PID  int    `json:"pid"`
	Type string `json:"type"` // "master", "worker", a program's name
	// Reloads: for the master, reloads asked since start (successful or
	// not); for a worker, how many reloads it has survived (a worker still
	// serving after a refused reload counts one more).
	Reloads int `json:"reloads"`
	// Failed is the master's "[failed: N]": reloads HAProxy refused.
	Failed  int    `json:"failed,omitempty"`
	Uptime  string `json:"uptime"`
	Version string `json:"version"`
}

// Procs is "show proc" parsed.
type Procs struct {
	Master  Proc   `json:"master"`
	Workers []Proc `json:"workers"`
	// OldWorkers are workers of earlier generations that have not exited
	// yet (finishing their connections) and, on 3.1+, the worker still
	// serving after a refused reload: 3.2 lists it here, with no current
	// worker at all.
	OldWorkers []Proc `json:"old_workers,omitempty"`
	Programs   []Proc `json:"programs,omitempty"`
}

// workerPIDs returns the pids of the current and old workers.
func (p Procs) workerPIDs() []int {
	var out []int
	for _, w := range append(slices.Clone(p.Workers), p.OldWorkers...) {
		out = append(out, w.PID)
	}
	return out
}

// ParseProc parses "show proc" (2.6 to 3.2): a header, the master's line,
// then "# workers", "# old workers" and "# programs" sections.
func ParseProc(text string) (Procs, error) {
	var p Procs
	section := "master"
	sawMaster := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "#<PID>"):
			continue
		case strings.HasPrefix(t, "#"):
			section = strings.TrimSpace(strings.TrimPrefix(t, "#"))
			continue
		}
		proc, err := parseProcLine(t)
		if err != nil {
			return Procs{}, err
		}
		switch section {
		case "master":
			p.Master, sawMaster = proc, true
		case "workers":
			p.Workers = append(p.Workers, proc)
		case "old workers":
			p.OldWorkers = append(p.OldWorkers, proc)
		default: // "programs" and what a newer version may add
			p.Programs = append(p.Programs, proc)
		}
	}
	if !sawMaster {
		return Procs{}, fmt.Errorf("\"show proc\" answered without a master line: %q", firstLines(text, 3))
	}
	return p, nil
}

// parseProcLine reads "<pid> <type> <reloads> [failed: N] <uptime> <version...>".
func parseProcLine(line string) (Proc, error) {
	f := strings.Fields(line)
	bad := func() (Proc, error) { return Proc{}, fmt.Errorf("unrecognised \"show proc\" line %q", line) }
	if len(f) < 4 {
		return bad()
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		return bad()
	}
	reloads, err := strconv.Atoi(f[2])
	if err != nil {
		return bad()
	}
	p := Proc{PID: pid, Type: f[1], Reloads: reloads}
	rest := f[3:]
	if rest[0] == "[failed:" && len(rest) >= 2 {
		if p.Failed, err = strconv.Atoi(strings.TrimSuffix(rest[1], "]")); err != nil {
			return bad()
		}
		rest = rest[2:]
	}
	if len(rest) > 0 {
		p.Uptime = rest[0]
	}
	if len(rest) > 1 {
		p.Version = strings.Join(rest[1:], " ")
	}
	return p, nil
}

// ShowProc lists the master and its workers.
func (c *Client) ShowProc(ctx context.Context) (Procs, error) {
	out, err := c.Execute(ctx, "show proc")
	if err != nil {
		return Procs{}, err
	}
	return ParseProc(out)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
