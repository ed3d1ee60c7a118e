package persist

import (
	"context"
	"fmt"
	"os"
)

// Runtime runs runtime API commands (a *runtimeapi.Client).
type Runtime interface {
	Execute(ctx context.Context, cmd string) (string, error)
}

// Kinds of file PersistFile writes from the runtime.
const (
	KindServerState = "server_state"
	KindMap         = "map"
	KindACL         = "acl"
)

// Render reads the runtime's current content for a file of kind (file is
// the map or ACL as HAProxy names it; unused for the state file) and
// renders it in that file's format.
func Render(ctx context.Context, rt Runtime, kind, file string) ([]byte, error) {
	switch kind {
	case KindServerState:
		out, err := rt.Execute(ctx, "show servers state")
		if err != nil {
			return nil, err
		}
		return StateFile(out)
	case KindMap, KindACL:
		// The file name came from HAProxy's own list ("show map"), and
		// Resolve already refused anything outside HAProxy's directory.
		out, err := rt.Execute(ctx, "show "+kind+" "+file)
		if err != nil {
			return nil, err
		}
		if kind == KindMap {
			return MapFile(out)
		}
		return ACLFile(out)
	}
	return nil, fmt.Errorf("unknown file kind %q", kind)
}

// Planned is what a preview shows of one file to write.
type Planned struct {
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Real   string `json:"real"`
	Digest string `json:"digest"` // now; the write's precondition
}

// Plan checks file (kind KindMap, KindACL, KindServerState or "cert") and
// records its digest for the write that follows the approval.
func (r Root) Plan(kind, file string) (Planned, error) {
	real, err := r.Resolve(file)
	if err != nil {
		return Planned{}, err
	}
	d, err := Digest(real)
	if err != nil {
		return Planned{}, fmt.Errorf("read %s: %w", real, err)
	}
	return Planned{Kind: kind, Path: file, Real: real, Digest: d}, nil
}

// Persist writes p's file from the runtime's content, under the
// precondition that it has not changed since Plan.
func (r Root) Persist(ctx context.Context, rt Runtime, p Planned) (Written, error) {
	data, err := Render(ctx, rt, p.Kind, p.Path)
	if err != nil {
		return Written{}, fmt.Errorf("read the runtime's %s for %s: %w; the file was not changed", p.Kind, p.Path, err)
	}
	return r.Write(p.Path, data, p.Digest)
}

// Sources are an instance's files to compare with its runtime.
type Sources struct {
	ConfigFiles []string // read for their "server" lines
	// StateFile is the server-state file; StateLoaded says whether the
	// configuration loads it (load-server-state-from-file).
	StateFile   string
	StateLoaded bool
	Maps, ACLs  []string // file-backed maps and ACLs, as HAProxy names them
}

// Report is what a reload would lose right now.
type Report struct {
	Changes []Change `json:"changes"`
	// Detail says what the answer rests on (no state file, ...).
	Detail []string `json:"detail,omitempty"`
}

// Status compares the runtime with what the files would load on reload.
func Status(ctx context.Context, rt Runtime, src Sources) (Report, error) {
	rep := Report{Changes: []Change{}}
	var config []ConfigServer
	for _, f := range src.ConfigFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return rep, fmt.Errorf("read HAProxy's configuration %s: %w", f, err)
		}
		config = append(config, ParseConfigServers(string(b))...)
	}
	out, err := rt.Execute(ctx, "show servers state")
	if err != nil {
		return rep, err
	}
	var state []Server
	switch {
	case src.StateFile == "" || !src.StateLoaded:
		rep.Detail = append(rep.Detail, "no server-state-file is loaded (server-state-file and load-server-state-from-file): a reload restores every server as configured")
	default:
		b, err := os.ReadFile(src.StateFile)
		if err != nil && !os.IsNotExist(err) {
			return rep, fmt.Errorf("read the server-state file %s: %w", src.StateFile, err)
		}
		if os.IsNotExist(err) {
			rep.Detail = append(rep.Detail, "the server-state file "+src.StateFile+" does not exist yet: a reload restores every server as configured")
		}
		state = ParseServersState(string(b))
	}
	rep.Changes = append(rep.Changes, DiffServers(ParseServersState(out), state, src.StateLoaded, config)...)
	for _, kind := range []string{KindMap, KindACL} {
		files := src.Maps
		if kind == KindACL {
			files = src.ACLs
		}
		for _, f := range files {
			show, err := rt.Execute(ctx, "show "+kind+" "+f)
			if err != nil {
				return rep, err
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return rep, fmt.Errorf("read the %s file %s: %w", kind, f, err)
			}
			isMap := kind == KindMap
			rep.Changes = append(rep.Changes, DiffEntries(kind, f, RuntimeEntries(show, isMap), ParsePatternFile(string(b), isMap))...)
		}
	}
	return rep, nil
}
