package cliversion

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/shared/syncbuf"
)

// cacheFormat changes whenever Features or the probes change, so a cache
// written by an older codermcp is probed anew. 2: the entry keeps the
// CLI's answers (Answers).
const cacheFormat = 2

// Prober probes CLIs and keeps the results on disk.
type Prober struct {
	// CacheDir holds one JSON file per probed binary; "" means
	// os.UserCacheDir()/mcpfleet/codermcp/cliversion. "-" disables the cache.
	CacheDir string
	// Limit bounds each CLI run of the probe (default 20s).
	Limit time.Duration
}

type cacheEntry struct {
	Format   int      `json:"format"`
	Key      string   `json:"key"`
	Features Features `json:"features"`
	// Answers are the CLI's standard output for the commands in
	// answered, by their arguments joined with spaces.
	Answers map[string]string `json:"answers,omitempty"`
}

// answered are the commands whose answers the probe keeps: what the CLI
// client asks at start-up (cli.Client.Caps).
var answered = map[string]bool{"--version": true, "exec --help": true, "exec resume --help": true}

// Probe returns what the CLI at path supports: from the cache when the
// binary is unchanged (same resolved path, size and modification time),
// else by running it. A failure is not cached.
func (p *Prober) Probe(ctx context.Context, path string) (Features, error) {
	f, _, err := p.probeEntry(ctx, path)
	return f, err
}

// Answers returns the CLI's answers (standard output) to --version, exec
// --help and exec resume --help as its last probe kept them, when the
// binary at path is the one probed then (same resolved path, size and
// modification time); ok is false otherwise, or without a cache. No CLI
// runs: this is a file read.
func (p *Prober) Answers(path string) (answers map[string]string, ok bool) {
	key, err := binaryKey(path)
	if err != nil {
		return nil, false
	}
	e, ok := p.cached(key)
	if !ok || e.Answers == nil {
		return nil, false
	}
	return e.Answers, true
}

// cached returns the cache entry for key, if any.
func (p *Prober) cached(key string) (cacheEntry, bool) {
	file := p.cacheFile(key)
	if file == "" {
		return cacheEntry{}, false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return cacheEntry{}, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Format != cacheFormat || e.Key != key {
		return cacheEntry{}, false
	}
	return e, true
}

func (p *Prober) probeEntry(ctx context.Context, path string) (Features, map[string]string, error) {
	key, err := binaryKey(path)
	if err != nil {
		return Features{}, nil, fmt.Errorf("probe the Codex CLI at %s: %w", path, err)
	}
	if e, ok := p.cached(key); ok {
		e.Features.Path = path
		return e.Features, e.Answers, nil
	}
	answers := map[string]string{}
	f, err := p.probe(ctx, path, answers)
	if err != nil {
		return Features{}, nil, err
	}
	if file := p.cacheFile(key); file != "" {
		// Best effort: an unwritable cache only costs the next start a probe.
		if b, err := json.MarshalIndent(cacheEntry{Format: cacheFormat, Key: key, Features: f, Answers: answers}, "", "  "); err == nil {
			if os.MkdirAll(filepath.Dir(file), 0o700) == nil {
				tmp := file + ".tmp" + fmt.Sprint(os.Getpid())
				if os.WriteFile(tmp, b, 0o600) == nil {
					_ = os.Rename(tmp, file)
				}
			}
		}
	}
	return f, answers, nil
}

// binaryKey identifies an installed CLI: its resolved path (the npm shim
// is a symlink into the package), size and modification time, and those of
// the package.json beside it, which every npm install rewrites.
func binaryKey(path string) (string, error) {
	if !strings.ContainsRune(path, filepath.Separator) {
		lp, err := exec.LookPath(path)
		if err != nil {
			return "", err
		}
		path = lp
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	real, _ = filepath.Abs(real)
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s|%d|%d", real, st.Size(), st.ModTime().UnixNano())
	if pj, err := os.Stat(filepath.Join(filepath.Dir(real), "..", "package.json")); err == nil {
		key += fmt.Sprintf("|%d|%d", pj.Size(), pj.ModTime().UnixNano())
	}
	return key, nil
}

func (p *Prober) cacheFile(key string) string {
	dir := p.CacheDir
	if dir == "-" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "mcpfleet", "codermcp", "cliversion")
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".json")
}

var (
	versionRE  = regexp.MustCompile(`(\d+\.\d+\.\d+)`)
	expectedRE = regexp.MustCompile("expected one of ((?:`[^`]*`(?:, )?)+)")
	tickRE     = regexp.MustCompile("`([^`]*)`")
	possibleRE = regexp.MustCompile(`\[possible values: ([^\]]+)\]`)
)

// probe runs the CLI; answers receives its standard output for the
// commands in answered that succeeded.
func (p *Prober) probe(ctx context.Context, path string, answers map[string]string) (Features, error) {
	// A throwaway CODEX_HOME: the probe must not read the user's config
	// (a profile or provider there would change the answers) nor write
	// sessions into it.
	home, err := os.MkdirTemp("", "codermcp-probe-")
	if err != nil {
		return Features{}, err
	}
	defer os.RemoveAll(home)
	r := runner{path: path, home: home, limit: p.Limit, answers: answers}
	f := Features{Path: path}

	out, err := r.run(ctx, nil, "--version")
	if err != nil {
		return Features{}, fmt.Errorf("probe the Codex CLI at %s: %w", path, err)
	}
	m := versionRE.FindString(out)
	if m == "" {
		return Features{}, fmt.Errorf("probe the Codex CLI at %s: no version number in %q", path, strings.TrimSpace(out))
	}
	f.Version = m

	top, _ := r.run(ctx, nil, "--help")
	commands := section(top, "Commands:")
	f.MCPServer = hasCommand(commands, "mcp-server")
	hasAppServer := hasCommand(commands, "app-server")

	execHelp, _ := r.run(ctx, nil, "exec", "--help")
	f.ExecJSON = hasFlag(execHelp, "json")
	f.Images = hasFlag(execHelp, "image")
	f.Profile = hasFlag(execHelp, "profile")
	f.AddDir = hasFlag(execHelp, "add-dir")
	f.SandboxFlag = hasFlag(execHelp, "sandbox")
	f.SkipGitCheck = hasFlag(execHelp, "skip-git-repo-check")
	execCommands := section(execHelp, "Commands:")
	f.Review = hasCommand(execCommands, "review")
	if f.SandboxFlag {
		f.SandboxModes = possibleValues(execHelp, "sandbox")
	}
	if hasCommand(execCommands, "resume") {
		resumeHelp, _ := r.run(ctx, nil, "exec", "resume", "--help")
		f.ResumeOptionsAfter = hasFlag(resumeHelp, "json")
		f.ResumeImages = hasFlag(resumeHelp, "image")
		f.Resume = true // confirmed below: it needs the thread id
	}

	// Configuration values the CLI rejects list what it accepts.
	if acc, ok := r.accepted(ctx, "model_reasoning_effort"); ok {
		f.ReasoningEfforts = acc
	} else {
		f.EffortsFromModel = true
		f.ReasoningEfforts = append([]string(nil), AllEfforts...)
	}
	if acc, ok := r.accepted(ctx, "web_search"); ok {
		f.WebSearch, f.WebSearchModes = "web_search", acc
	} else if r.rejectsString(ctx, "tools.web_search") {
		f.WebSearch = "tools.web_search"
	}

	if f.ExecJSON {
		f.EventStream = r.eventStream(ctx)
	}
	f.Resume = f.Resume && f.EventStream == "thread"
	if hasAppServer {
		f.AppServer, f.AppServerMethods = r.appServer(ctx)
	}
	return f, ctx.Err()
}

// section returns the lines of a clap help text after header up to the
// next blank line.
func section(help, header string) string {
	i := strings.Index(help, "\n"+header)
	if i < 0 {
		return ""
	}
	rest := help[i+len(header)+1:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func hasCommand(commands, name string) bool {
	for _, line := range strings.Split(commands, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

func hasFlag(help, name string) bool {
	return regexp.MustCompile(`(?m)^\s+(?:-\w, )?--` + regexp.QuoteMeta(name) + `\b`).MatchString(help)
}

// possibleValues reads clap's "[possible values: …]" for a flag.
func possibleValues(help, flag string) []string {
	i := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--` + regexp.QuoteMeta(flag) + `\b`).FindStringIndex(help)
	if i == nil {
		return nil
	}
	rest := help[i[1]:]
	// Only this flag's description: up to the next option line.
	if j := regexp.MustCompile(`(?m)^\s+-`).FindStringIndex(rest); j != nil {
		rest = rest[:j[0]]
	}
	m := possibleRE.FindStringSubmatch(rest)
	if m == nil {
		return nil
	}
	var out []string
	for _, v := range strings.Split(m[1], ",") {
		out = append(out, strings.TrimSpace(v))
	}
	return out
}

type runner struct {
	path, home string
	limit      time.Duration
	answers    map[string]string // standard output of the commands in answered; nil: none kept
	dir        string            // working directory; "": home
	env        []string          // environment before CODEX_HOME; nil: this process's
}

// cmd prepares a probe run: its own process group (the npm shim forwards
// signals, but a killed shim orphans the native binary), stdin the null
// device, the throwaway home.
func (r runner) cmd(ctx context.Context, args ...string) (*exec.Cmd, context.CancelFunc) {
	limit := r.limit
	if limit <= 0 {
		limit = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	cmd := exec.CommandContext(ctx, r.path, args...)
	env := r.env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], "CODEX_HOME="+r.home)
	cmd.Dir = r.home
	if r.dir != "" {
		cmd.Dir = r.dir
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, cancel
}

// run returns stdout and stderr together (clap prints errors on stderr,
// help on stdout).
func (r runner) run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd, cancel := r.cmd(ctx, args...)
	defer cancel()
	cmd.Stdin = stdin
	out := &syncbuf.Buffer{}
	var stdout bytes.Buffer
	keep := r.answers != nil && answered[strings.Join(args, " ")]
	cmd.Stdout, cmd.Stderr = out, out
	if keep {
		// Two pipes now: out is written from two goroutines.
		cmd.Stdout = io.MultiWriter(out, &stdout)
	}
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if keep && err == nil {
		r.answers[strings.Join(args, " ")] = stdout.String()
	}
	return out.String(), err
}

// accepted sets key to an invalid string and reads the values the CLI says
// it expects; ok is false when it took the value (a free-form key, or one
// it does not know).
func (r runner) accepted(ctx context.Context, key string) ([]string, bool) {
	out, _ := r.run(ctx, nil, "-c", key+`="codermcp-probe"`, "mcp", "list")
	m := expectedRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "codermcp-probe") {
		return nil, false
	}
	var vals []string
	for _, t := range tickRE.FindAllStringSubmatch(m[1], -1) {
		vals = append(vals, t[1])
	}
	return vals, true
}

// rejectsString reports whether key exists with a non-string type (the
// boolean tools.web_search of older CLIs).
func (r runner) rejectsString(ctx context.Context, key string) bool {
	out, _ := r.run(ctx, nil, "-c", key+`="codermcp-probe"`, "mcp", "list")
	return strings.Contains(out, "invalid type") || strings.Contains(out, "did not match any variant")
}

// eventStream starts a turn against a closed port on 127.0.0.1 (nothing is
// sent anywhere) and reads the first JSON event: thread.started on CLIs
// whose stream carries the thread id, a config summary on older ones.
func (r runner) eventStream(ctx context.Context, extra ...string) string {
	cmd, cancel := r.cmd(ctx, append(append([]string{"exec", "--json", "--skip-git-repo-check"}, extra...),
		"-c", `model_provider="codermcp_probe"`,
		"-c", `model_providers.codermcp_probe.name="codermcp-probe"`,
		"-c", `model_providers.codermcp_probe.base_url="http://127.0.0.1:9/v1"`,
		"-c", `model_providers.codermcp_probe.wire_api="responses"`,
		"-c", "model_providers.codermcp_probe.request_max_retries=0",
		"-c", "model_providers.codermcp_probe.stream_max_retries=0",
		"-c", `model="codermcp-probe"`,
		"--", "codermcp feature probe")...)
	defer cancel()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return ""
	}
	if cmd.Start() != nil {
		return ""
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var ev map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if t, ok := ev["type"]; ok {
			var typ string
			_ = json.Unmarshal(t, &typ)
			if typ == "thread.started" {
				return "thread"
			}
			continue
		}
		return "legacy"
	}
	return ""
}

// appServer asks the app-server for an unknown method: v2 servers answer
// with the list of methods they have; v1 (0.50.0) answers a bare
// "Invalid request".
func (r runner) appServer(ctx context.Context) (string, []string) {
	cmd, cancel := r.cmd(ctx, "app-server")
	defer cancel()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil
	}
	if cmd.Start() != nil {
		return "", nil
	}
	defer func() {
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"codermcp-probe","version":"0"}}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"codermcp/probe","params":{}}`+"\n")
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	initialized := false
	for sc.Scan() {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch string(m.ID) {
		case "1":
			initialized = m.Error == nil
		case "2":
			if !initialized || m.Error == nil {
				return "", nil
			}
			var methods []string
			if e := expectedRE.FindStringSubmatch(m.Error.Message); e != nil {
				for _, t := range tickRE.FindAllStringSubmatch(e[1], -1) {
					methods = append(methods, t[1])
				}
			}
			has := func(name string) bool {
				for _, x := range methods {
					if x == name {
						return true
					}
				}
				return false
			}
			if has("thread/start") && has("thread/resume") && has("turn/start") {
				return "v2", methods
			}
			return "v1", methods
		}
	}
	return "", nil
}

// errNotKept is an answer the cache does not hold.
var errNotKept = errors.New("not kept by the last probe")

// SeedCaps gives client the capabilities cli.CapsFromAnswers derives from
// the answers the last probe of this very binary kept (Answers), and
// reports whether it did. The server calls it at start-up, before serving,
// so that the first call after a restart does not wait for the CLI to
// answer --version and its help again. A binary that changed since (path,
// size or modification time), was never probed, or whose kept answers miss
// one that is needed leaves client to ask the CLI itself, as before.
func (p *Prober) SeedCaps(client *cli.Client) bool {
	answers, ok := p.Answers(client.Path)
	if !ok {
		return false
	}
	missing := false
	caps, err := cli.CapsFromAnswers(client.Path, func(args ...string) (string, error) {
		a, ok := answers[strings.Join(args, " ")]
		if !ok {
			missing = true
			return "", errNotKept
		}
		return a, nil
	})
	if err != nil || missing {
		return false
	}
	client.SetCaps(caps)
	return true
}

// WarmHome has the CLI at path set up home, the CODEX_HOME the server's
// turns use: the first run in a new home creates its state databases and
// unpacks the bundled skills (0.169.0: 70-odd files), which otherwise
// happens on the first call's path. It starts one turn against a closed
// port on 127.0.0.1 (no model is reached, so nothing runs) in an empty
// directory, with only PATH, HOME, TMPDIR and the locale of this process's
// environment, and stops the CLI at its first event (a thread id or, on
// older CLIs, the config summary), by when the home is set up. None of
// mcpServers, the MCP servers home's configuration names, starts. The turn
// leaves its rollout file under home's sessions directory.
func WarmHome(ctx context.Context, path, home string, mcpServers []string, limit time.Duration) error {
	dir, err := os.MkdirTemp("", "codermcp-warm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r := runner{path: path, home: home, limit: limit, dir: dir, env: []string{}}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL":
			r.env = append(r.env, kv)
		}
	}
	// The server's own configuration may name MCP servers
	// (CODER_MCP_SERVERS): none is started for this turn.
	var off []string
	for _, name := range mcpServers {
		off = append(off, "-c", "mcp_servers."+name+".enabled=false")
	}
	if r.eventStream(ctx, off...) == "" {
		return fmt.Errorf("the Codex CLI at %s printed no event while setting up %s", path, home)
	}
	return nil
}
