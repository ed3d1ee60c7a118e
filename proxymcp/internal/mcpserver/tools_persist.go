package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/master"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/persist"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// Lifecycle is one instance's settings for changes that outlive a reload
// (PROXY_<NAME>_PERSIST), the guarded reload (PROXY_<NAME>_MASTER_URL,
// PROXY_<NAME>_HAPROXY_BIN) and certificate files.
type Lifecycle struct {
	// Persist: after each applied change, rewrite the file HAProxy loads
	// it from at reload.
	Persist bool
	// Master is the master CLI; nil without PROXY_MASTER_URL.
	Master *master.Client
	// Check runs haproxy -c on the instance's own files with its own binary.
	Check master.Checker
	// Root is the only directory files are written in (PROXY_HAPROXY_DIR,
	// by default the first configuration file's directory).
	Root persist.Root
	// ConfigFiles are the files HAProxy is started with (-f).
	ConfigFiles []string
	// AllAtOnce: a fleet reload runs everywhere at once instead of one
	// instance at a time, stopping at the first failure.
	AllAtOnce bool
	// CertExpiry, when set, records mcpfleet_haproxy_ssl_cert_expiry_seconds.
	CertExpiry func(cert string, seconds float64)
}

// stateFileConfig is what the configuration says about the server-state file.
type stateFileConfig struct {
	File   string // absolute, after server-state-base; "" when none
	Loaded bool   // some section has load-server-state-from-file (not "none")
}

// readStateConfig reads server-state-file, server-state-base and
// load-server-state-from-file from the configuration files.
func readStateConfig(files []string) (stateFileConfig, error) {
	var c stateFileConfig
	var base, file string
	var firstDir string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return c, fmt.Errorf("read HAProxy's configuration %s: %w (check PROXY_HAPROXY_CONFIG)", f, err)
		}
		if firstDir == "" {
			firstDir = filepath.Dir(f)
		}
		s := bufio.NewScanner(fh)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			line := s.Text()
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			w := strings.Fields(line)
			if len(w) < 2 {
				continue
			}
			switch w[0] {
			case "server-state-file":
				file = w[1]
			case "server-state-base":
				base = w[1]
			case "load-server-state-from-file":
				c.Loaded = c.Loaded || w[1] != "none"
			}
		}
		fh.Close()
		if err := s.Err(); err != nil {
			return c, fmt.Errorf("read HAProxy's configuration %s: %w", f, err)
		}
	}
	if file != "" {
		switch {
		case filepath.IsAbs(file):
			c.File = file
		case base != "":
			c.File = filepath.Join(base, file)
		default:
			// HAProxy resolves a relative name against its working
			// directory; the configuration's directory is the usual one.
			c.File = filepath.Join(firstDir, file)
		}
	}
	return c, nil
}

// noStateFile is said at start and in every result when server states
// cannot survive a reload whatever proxymcp writes.
const noStateFile = "server-state-file and load-server-state-from-file are not both configured: server changes (state, weight, address) are lost on reload even with PROXY_PERSIST=on; add them to HAProxy's configuration"

// StartupNotes are what start-up logs about an instance's persistence.
func (l *Lifecycle) StartupNotes() []string {
	if l == nil || !l.Persist {
		return nil
	}
	sc, err := readStateConfig(l.ConfigFiles)
	switch {
	case err != nil:
		return []string{err.Error()}
	case sc.File == "" || !sc.Loaded:
		return []string{noStateFile}
	}
	return nil
}

// persistTarget is the file a change tool's call would have to rewrite.
type persistTarget struct {
	kind string // persist.KindServerState, KindMap or KindACL
	ref  string // the map or ACL as the call named it
}

// serverStateTools are the changes the server-state file carries.
var serverStateTools = map[string]bool{
	"set_server_state": true, "set_server_weight": true, "set_server_addr": true, "set_server_check_port": true,
	"enable_server": true, "disable_server": true,
}

// targetOf says which file a call of tool changes, from its arguments.
func targetOf(tool string, in any) (persistTarget, bool) {
	if serverStateTools[tool] {
		return persistTarget{kind: persist.KindServerState}, true
	}
	b, err := json.Marshal(in)
	if err != nil {
		return persistTarget{}, false
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if ref, ok := m["map"].(string); ok && ref != "" {
		return persistTarget{kind: persist.KindMap, ref: ref}, true
	}
	if ref, ok := m["acl"].(string); ok && ref != "" {
		return persistTarget{kind: persist.KindACL, ref: ref}, true
	}
	return persistTarget{}, false
}

// persisting wraps a change tool's planner so that, with persistence on,
// the preview names the file to rewrite and the run rewrites it after the
// runtime change succeeded.
func persisting[T selector](t *tools, name string, plan func(T) (planned, error)) func(T) (planned, error) {
	return func(in T) (planned, error) {
		p, err := plan(in)
		if err != nil || t.life == nil {
			return p, err
		}
		tg, ok := targetOf(name, in)
		if !ok {
			return p, nil
		}
		if !t.life.Persist {
			return notPersisting(tg, p), nil
		}
		return t.persistHook(tg, p), nil
	}
}

// persistOff is what every result says of a change with PROXY_PERSIST=off.
const persistOff = "Runtime change only (PROXY_PERSIST is off): no file was written, so it is lost on the next reload or restart; see persistence_status"

// notPersisting says in the result that the change is not persisted.
func notPersisting(tg persistTarget, p planned) planned {
	run := p.run
	p.run = func(ctx context.Context) (result, error) {
		res, err := run(ctx)
		if err != nil || res.data == nil {
			return res, err
		}
		res.data["persisted"] = false
		res.data["persistence"] = persistOff
		if _, ok := res.data["note"]; !ok {
			res.data["note"] = persistOff
		}
		return res, nil
	}
	return p
}

// persistHook adds the file write to a planned change.
func (t *tools) persistHook(tg persistTarget, p planned) planned {
	var (
		mu    sync.Mutex
		plans []persist.Planned // from the last preview: the write's precondition
	)
	// The audit record's commands name the write; after the run the line
	// is completed with the digests before and after (the outcome record
	// is written from the same slice).
	idx := len(p.commands)
	p.commands = append(p.commands, "persist: rewrite "+t.fileWords(tg)+" from the runtime (PROXY_PERSIST=on)")
	commands := p.commands
	if describe := p.describe; describe != nil {
		p.describe = func(ctx context.Context) (toolcall.Preview, error) {
			pv, err := describe(ctx)
			if err != nil {
				return pv, err
			}
			pl, note, perr := t.planPersist(ctx, tg)
			mu.Lock()
			plans = pl
			mu.Unlock()
			switch {
			case perr != nil:
				pv.Summary += " It would be applied at run time but NOT persisted: " + perr.Error()
			default:
				var names []string
				for _, x := range pl {
					// The digest is the write's precondition: a file
					// replaced before the approval is refused then.
					names = append(names, x.Path+" (now "+orNone(x.Digest)+")")
					pv.Precondition += "; " + x.Path + " " + orNone(x.Digest)
				}
				pv.Summary += " Then rewrites " + strings.Join(names, ", ") + " from the runtime (PROXY_PERSIST=on), so the change survives a reload; a file changed by anyone else before the change runs is not overwritten."
			}
			if note != "" {
				pv.Summary += " " + note
			}
			return pv, nil
		}
	}
	run := p.run
	p.run = func(ctx context.Context) (result, error) {
		// HAProxy may show a server change in "show servers state" a moment
		// after it answered the command (seen on 3.2 with set server addr):
		// the state file is written once the dump shows something new.
		var before []byte
		if tg.kind == persist.KindServerState {
			before, _ = persist.Render(ctx, t.hp.Runtime, persist.KindServerState, "")
		}
		res, err := run(ctx)
		if err != nil || res.data == nil {
			return res, err
		}
		if before != nil {
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
				now, err := persist.Render(ctx, t.hp.Runtime, persist.KindServerState, "")
				if err != nil || !bytes.Equal(now, before) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		mu.Lock()
		pl := plans
		mu.Unlock()
		var note string
		var perr error
		if pl == nil {
			pl, note, perr = t.planPersist(ctx, tg)
		}
		var written []persist.Written
		for _, x := range pl {
			if perr != nil {
				break
			}
			w, err := t.life.Root.Persist(ctx, t.hp.Runtime, x)
			if err != nil {
				perr = err
				break
			}
			written = append(written, w)
		}
		if perr != nil {
			retry := map[string]any{"tool": "persist_now", "arguments": retryArgs(tg)}
			msg := "applied at run time, NOT persisted: " + perr.Error()
			commands[idx] = "persist: FAILED " + t.fileWords(tg) + ": " + perr.Error()
			res.data["persisted"] = false
			res.data["persistence"] = map[string]any{"persisted": false, "error": msg, "retry_with": retry}
			res.data["note"] = msg + fmt.Sprintf(" — retry with persist_now %s", mustJSON(retry["arguments"]))
			res.failed = msg
			return res, nil
		}
		var parts []string
		for _, w := range written {
			parts = append(parts, w.Path+" "+orNone(w.Before)+" -> "+w.After)
		}
		commands[idx] = "persist: rewrote " + strings.Join(parts, "; ")
		res.data["persisted"] = true
		pers := map[string]any{"persisted": true, "files": written}
		if note != "" {
			pers["note"] = note
		}
		res.data["persistence"] = pers
		res.data["note"] = "Persisted: " + strings.Join(parts, "; ") + "."
		if note != "" {
			res.data["note"] = res.data["note"].(string) + " " + note
		}
		return res, nil
	}
	return p
}

func orNone(d string) string {
	if d == "" {
		return "(no file)"
	}
	return d
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func retryArgs(tg persistTarget) map[string]any {
	if tg.kind == persist.KindServerState {
		return map[string]any{"kind": tg.kind}
	}
	return map[string]any{"kind": tg.kind, "file": tg.ref}
}

// fileWords names the file of a target before it is resolved.
func (t *tools) fileWords(tg persistTarget) string {
	if tg.kind == persist.KindServerState {
		return "the server-state file"
	}
	return "the file of " + tg.kind + " " + tg.ref
}

// planPersist resolves the file a target rewrites and records its digest.
// note says what the file cannot carry (no state file loaded, an address
// the state file does not restore).
func (t *tools) planPersist(ctx context.Context, tg persistTarget) ([]persist.Planned, string, error) {
	if t.hp.Runtime == nil {
		return nil, "", errors.New("the runtime API is disabled here, so the runtime's content cannot be read")
	}
	switch tg.kind {
	case persist.KindServerState:
		sc, err := readStateConfig(t.life.ConfigFiles)
		if err != nil {
			return nil, "", err
		}
		if sc.File == "" || !sc.Loaded {
			return nil, "", errors.New(noStateFile)
		}
		pl, err := t.life.Root.Plan(persist.KindServerState, sc.File)
		if err != nil {
			return nil, "", err
		}
		return []persist.Planned{pl}, "A server whose address is an IP address in the configuration gets its port back from the state file on reload, but not its IP address.", nil
	default:
		kind := haproxy.KindMap
		if tg.kind == persist.KindACL {
			kind = haproxy.KindACL
		}
		lists, err := t.hp.ListPatterns(ctx, kind)
		if err != nil {
			return nil, "", err
		}
		file := ""
		for _, l := range lists {
			if l.Ref == tg.ref || fmt.Sprintf("#%d", l.ID) == tg.ref || (l.File != "" && l.File == tg.ref) {
				file = l.File
				break
			}
		}
		if file == "" {
			return nil, "", fmt.Errorf("%s %s was not loaded from a file (or is unknown), so there is no file to rewrite; it lasts until the next reload", tg.kind, tg.ref)
		}
		pl, err := t.life.Root.Plan(tg.kind, file)
		if err != nil {
			return nil, "", err
		}
		return []persist.Planned{pl}, "", nil
	}
}

// sources are what persistence_status compares the runtime with.
func (t *tools) sources(ctx context.Context) (persist.Sources, error) {
	src := persist.Sources{ConfigFiles: t.life.ConfigFiles}
	sc, err := readStateConfig(t.life.ConfigFiles)
	if err != nil {
		return src, err
	}
	src.StateFile, src.StateLoaded = sc.File, sc.Loaded
	for _, kind := range []haproxy.MapKind{haproxy.KindMap, haproxy.KindACL} {
		lists, err := t.hp.ListPatterns(ctx, kind)
		if err != nil {
			return src, err
		}
		seen := map[string]bool{}
		for _, l := range lists {
			if l.File == "" || seen[l.File] {
				continue
			}
			if _, err := os.Stat(l.File); err != nil {
				continue // an inline ACL's text, or a file not visible here
			}
			seen[l.File] = true
			if kind == haproxy.KindMap {
				src.Maps = append(src.Maps, l.File)
			} else {
				src.ACLs = append(src.ACLs, l.File)
			}
		}
	}
	return src, nil
}

// status is persistence_status for this instance.
func (t *tools) status(ctx context.Context) (map[string]any, error) {
	if t.life == nil || len(t.life.ConfigFiles) == 0 {
		return nil, errors.New("persistence_status needs HAProxy's configuration files: set PROXY_HAPROXY_CONFIG (PROXY_<NAME>_HAPROXY_CONFIG) to the files HAProxy is started with")
	}
	if t.hp.Runtime == nil {
		return nil, haproxy.ErrRuntimeDisabled
	}
	src, err := t.sources(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := persist.Status(ctx, t.hp.Runtime, src)
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"persist":            t.life.Persist,
		"would_be_lost":      rep.Changes,
		"count":              len(rep.Changes),
		"server_state_file":  src.StateFile,
		"state_file_loaded":  src.StateLoaded,
		"map_files":          orEmptyList(src.Maps),
		"acl_files":          orEmptyList(src.ACLs),
		"survives_reload_as": "what the files above load: the configuration, the server-state file, the map and ACL files",
	}
	if len(rep.Detail) > 0 {
		out["detail"] = rep.Detail
	}
	return out, nil
}

func orEmptyList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

type persistNowIn struct {
	fleetArg
	Kind string `json:"kind" jsonschema:"What to rewrite from the runtime: server_state (the server-state file), map or acl." enum:"server_state,map,acl"`
	File string `json:"file,omitempty" jsonschema:"The map or ACL file exactly as list_maps / list_acls report it (kind map or acl)." pattern:"^(#[0-9]+|[A-Za-z0-9/._-]+)$" maxLength:"1024"`
}

// persistTools are persistence_status and persist_now.
func (t *tools) persistTools() {
	addRead(t, "persistence_status", "What a reload would lose",
		"Per instance, what a reload would lose right now: each server (admin state, weight, address, port), map entry and ACL entry whose runtime value differs from what HAProxy's files (configuration, server-state file, map and ACL files) would load. Needs PROXY_HAPROXY_CONFIG. An empty `would_be_lost` means a reload now keeps everything; `detail` says what the answer rests on.",
		func(ctx context.Context, _ noArgs) (result, error) {
			st, err := t.status(ctx)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, st), nil
		})

	addChange(t, "persist_now", "Write runtime state to HAProxy's files",
		"Rewrite the server-state file, or one map or ACL file, from the runtime's current content (atomically, inside PROXY_HAPROXY_DIR only), so what is applied now survives a reload; the call a change result gives when its own write failed. Needs PROXY_PERSIST=on.",
		idempotent, toolcall.Change,
		func(in persistNowIn) (planned, error) {
			if t.life == nil || !t.life.Persist {
				return planned{}, errors.New("persist_now needs PROXY_PERSIST=on (PROXY_<NAME>_PERSIST) and PROXY_HAPROXY_CONFIG for this instance; nothing was written")
			}
			tg := persistTarget{kind: in.Kind, ref: in.File}
			if in.Kind != persist.KindServerState && in.File == "" {
				return planned{}, &validate.Error{Arg: "file", Rule: "is required for kind map or acl"}
			}
			p := planned{
				commands: []string{},
				describe: func(ctx context.Context) (toolcall.Preview, error) {
					return toolcall.Preview{Summary: "Rewrite " + t.fileWords(tg) + " on " + t.at() + " from the runtime's current content."}, nil
				},
				run: func(ctx context.Context) (result, error) {
					return ok(haproxy.SourceRuntime, map[string]any{"kind": in.Kind, "changed": true}), nil
				},
			}
			return t.persistHook(tg, p), nil
		})
}

// markFailed makes a result whose persistence failed an error result: the
// change is applied at run time, but it is not the success asked for.
func markFailed(r *mcp.CallToolResult, res result) *mcp.CallToolResult {
	if res.failed != "" && r != nil {
		r.IsError = true
	}
	return r
}
