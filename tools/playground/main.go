// Command playground runs all four servers on local back ends in one
// command (scripts/playground, the README's first command): an in-process
// Kafka-protocol cluster, a real haproxy, the Trino-protocol test engine and
// the real Codex CLI; then the four MCP servers over streamable HTTP on
// consecutive ports, a ready-to-paste mcpServers block, and a short tour
// through a real MCP client.
//
//	scripts/playground [--port-base 8701] [--tour-only]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("playground", flag.ContinueOnError)
	fs.SetOutput(stderr)
	portBase := fs.Int("port-base", 8701, "first of four consecutive ports for the MCP servers")
	tourOnly := fs.Bool("tour-only", false, "exit after the tour (status 0 when every step succeeded)")
	keep := fs.Bool("keep-logs", false, "keep the temporary directory with the logs after exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		return 1
	}
	for i := 0; i < 4; i++ {
		if err := portFree(*portBase + i); err != nil {
			fmt.Fprintf(stderr, "playground: port %d is busy (%v): stop whatever listens there (another playground?) or pass --port-base\n", *portBase+i, err)
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "mcpfleet-playground-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		return 1
	}
	p := &playground{root: root, dir: dir, portBase: *portBase}
	defer func() {
		p.stopAll()
		if !*keep && *tourOnly && p.ok {
			os.RemoveAll(dir)
		} else {
			fmt.Printf("\nLogs are kept in %s\n", dir)
		}
	}()
	fmt.Printf("mcpfleet playground — logs and state under %s\n\n", dir)

	if err := p.build(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		return 1
	}
	p.startAll(ctx)
	p.printClientConfig()
	p.ok = p.tour(ctx)
	if *tourOnly {
		if p.ok {
			return 0
		}
		return 1
	}
	fmt.Println("\nServing until Ctrl-C ...")
	<-ctx.Done()
	fmt.Println("\nStopping everything the playground started ...")
	return 0
}

// playground owns every process it starts.
type playground struct {
	root     string
	dir      string
	portBase int
	procs    []*proc
	servers  []*serverInfo
	skipped  []string
	ok       bool

	drain                           [2]string // backend and server the tour drains
	askedMu                         sync.Mutex
	asked                           []string // approval requests the tour's person was shown
	sqlCatalog, sqlSchema, sqlTable string
}

type serverInfo struct {
	name string
	port int
	env  []string // what the server needs beyond the MCP_* transport variables
	bin  string
	args []string
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	wd, _ := os.Getwd()
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("run the playground from inside the repository")
}

func portFree(port int) error {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return l.Close()
}

// build compiles the four servers and the local back ends into dir/bin.
func (p *playground) build(ctx context.Context) error {
	fmt.Println("Building the four servers and the local back ends ...")
	bin := filepath.Join(p.dir, "bin")
	targets := [][2]string{
		{"streammcp", "./streammcp"}, {"proxymcp", "./proxymcp"}, {"codermcp", "./codermcp"}, {"sqlmcp", "./sqlmcp"},
		{"playkafka", "./streammcp/internal/kafkatest/cmd/playkafka"},
		{"playhaproxy", "./proxymcp/internal/haproxytest/cmd/playhaproxy"},
		{"playtrino", "./sqlmcp/internal/trinotest/cmd/playtrino"},
		{"playmodel", "./codermcp/internal/codertest/cmd/playmodel"},
	}
	for _, t := range targets {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, t[0]), t[1])
		cmd.Dir = p.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", t[1], err, out)
		}
	}
	return nil
}

func (p *playground) binPath(name string) string { return filepath.Join(p.dir, "bin", name) }

// start runs a process in its own process group with its output in a log
// file; with wantLine it waits for the one JSON line the back-end commands
// print when they are ready and decodes it into ready.
func (p *playground) start(ctx context.Context, name string, args []string, env []string, ready any) error {
	logf, err := os.Create(filepath.Join(p.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout io.ReadCloser
	if ready != nil {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return err
		}
	} else {
		cmd.Stdout = logf
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	pr := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	p.procs = append(p.procs, pr)
	go func() { cmd.Wait(); logf.Close(); close(pr.done) }()
	if ready == nil {
		return nil
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(logf, stdout)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			return fmt.Errorf("%s exited before it was ready; see %s", name, logf.Name())
		}
		if err := json.Unmarshal([]byte(line), ready); err != nil {
			return fmt.Errorf("%s printed %q, not its ready line: %w", name, line, err)
		}
		return nil
	case <-time.After(120 * time.Second):
		return fmt.Errorf("%s was not ready within 120s; see %s", name, logf.Name())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopAll ends every process group it started, servers first, and waits.
func (p *playground) stopAll() {
	for i := len(p.procs) - 1; i >= 0; i-- {
		pr := p.procs[i]
		syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-pr.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
			<-pr.done
		}
	}
	p.procs = nil
}

func (p *playground) skip(name, why string) {
	p.skipped = append(p.skipped, name)
	fmt.Printf("  ! %s skipped: %s\n", name, why)
}

// startAll starts each back end and its server; a back end that cannot be
// had skips only its server.
func (p *playground) startAll(ctx context.Context) {
	fmt.Println("Starting local back ends and servers ...")
	common := []string{"MCP_TRANSPORT=http", "MCP_HOST=127.0.0.1", "LOG_LEVEL=info"}
	add := func(name string, idx int, env []string, args ...string) {
		port := p.portBase + idx
		s := &serverInfo{name: name, port: port, env: env, bin: p.binPath(name), args: args}
		all := append(append([]string{}, common...), env...)
		all = append(all, "MCP_PORT="+strconv.Itoa(port))
		if err := p.start(ctx, name, append([]string{s.bin}, args...), all, nil); err != nil {
			p.skip(name, err.Error())
			return
		}
		if err := waitHealthy(ctx, port); err != nil {
			p.skip(name, err.Error()+"; see "+filepath.Join(p.dir, name+".log"))
			return
		}
		p.servers = append(p.servers, s)
		fmt.Printf("  ✓ %-9s http://127.0.0.1:%d/mcp\n", name, port)
	}

	var kafka struct {
		Brokers string `json:"brokers"`
	}
	if err := p.start(ctx, "playkafka", []string{p.binPath("playkafka")}, nil, &kafka); err != nil {
		p.skip("streammcp", err.Error())
	} else {
		// A fleet of two: prod (lagging groups, one under-replicated
		// partition; the default cluster) and staging (healthy).
		env := []string{"STREAM_BROKERS=" + kafka.Brokers}
		var staging struct {
			Brokers string `json:"brokers"`
		}
		if err := p.start(ctx, "playkafka-staging", []string{p.binPath("playkafka"), "-scenario=quiet"}, nil, &staging); err != nil {
			fmt.Printf("  ! staging Kafka cluster not started (%v): streammcp serves prod alone\n", err)
		} else {
			env = []string{"STREAM_CLUSTERS=prod,staging", "STREAM_PROD_BROKERS=" + kafka.Brokers, "STREAM_STAGING_BROKERS=" + staging.Brokers}
		}
		add("streammcp", 0, env)
	}

	if _, err := exec.LookPath("haproxy"); err != nil {
		p.skip("proxymcp", "haproxy is not installed: run scripts/install/proxymcp.sh (apt-get install haproxy)")
	} else {
		// Two HAProxy instances, lb1 and lb2: proxymcp in fleet mode
		// (PROXY_INSTANCES), the credentials given once for both.
		type haproxyReady struct {
			RuntimeURL    string `json:"runtime_url"`
			RuntimeSocket string `json:"runtime_socket"`
			StatsURL      string `json:"stats_url"`
			StatsUser     string `json:"stats_username"`
			StatsPassword string `json:"stats_password"`
			DrainBackend  string `json:"drain_backend"`
			DrainServer   string `json:"drain_server"`
		}
		env := []string{"PROXY_INSTANCES=lb1,lb2"}
		var failed error
		for _, name := range []string{"lb1", "lb2"} {
			var hp haproxyReady
			if err := p.start(ctx, "playhaproxy-"+name, []string{p.binPath("playhaproxy"), "-dir", filepath.Join(p.dir, "haproxy-"+name)}, nil, &hp); err != nil {
				failed = err
				break
			}
			p.drain = [2]string{hp.DrainBackend, hp.DrainServer}
			up := strings.ToUpper(name)
			env = append(env, "PROXY_"+up+"_RUNTIME_URL="+hp.RuntimeURL, "PROXY_"+up+"_STATS_URL="+hp.StatsURL,
				"PROXY_STATS_USERNAME="+hp.StatsUser, "PROXY_STATS_PASSWORD="+hp.StatsPassword)
		}
		if failed != nil {
			p.skip("proxymcp", failed.Error())
		} else {
			add("proxymcp", 1, env)
		}
	}

	codex, why := findCodex(p.root)
	if codex == "" {
		p.skip("codermcp", why)
	} else {
		env := []string{"CODER_CLI_PATH=" + codex}
		if loggedIn(codex) {
			fmt.Println("  • Codex CLI is logged in: codermcp uses it as it is")
		} else {
			var m struct {
				CodexHome string `json:"codex_home"`
				Model     string `json:"model"`
				Endpoint  string `json:"endpoint"`
			}
			if err := p.start(ctx, "playmodel", []string{p.binPath("playmodel"), "-dir", filepath.Join(p.dir, "model")}, nil, &m); err != nil {
				p.skip("codermcp", err.Error())
				env = nil
			} else {
				fmt.Printf("  • Codex CLI is not logged in: it talks to a local model endpoint (%s) that answers with canned, clearly labelled replies\n", m.Endpoint)
				env = append(env, "CODER_HOME="+m.CodexHome, "CODER_MODELS="+m.Model, "CODER_DEFAULT_MODEL="+m.Model)
			}
		}
		if env != nil {
			add("codermcp", 2, env)
		}
	}

	var trino struct {
		Host    string `json:"host"`
		Port    int    `json:"port"`
		Catalog string `json:"catalog"`
		Schema  string `json:"schema"`
	}
	if err := p.start(ctx, "playtrino", []string{p.binPath("playtrino")}, nil, &trino); err != nil {
		p.skip("sqlmcp", err.Error())
	} else {
		p.sqlCatalog, p.sqlSchema = trino.Catalog, trino.Schema
		add("sqlmcp", 3, []string{"SQLENGINE_HOST=" + trino.Host, "SQLENGINE_PORT=" + strconv.Itoa(trino.Port),
			"SQLENGINE_USER=playground", "SQLENGINE_CATALOG=" + trino.Catalog, "SQLENGINE_SCHEMA=" + trino.Schema,
			"XDG_CONFIG_HOME=" + filepath.Join(p.dir, "config")}, "serve")
	}
}

func waitHealthy(ctx context.Context, port int) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("no answer on port %d within 30s", port)
}

// findCodex asks the installer for the pinned Codex CLI (it installs it when
// missing and prints its path: the one place that knows where it lives),
// falling back to a codex on PATH.
func findCodex(root string) (string, string) {
	inst := filepath.Join(root, "scripts", "install", "codermcp.sh")
	out, err := exec.Command("bash", inst).Output()
	if err == nil {
		if path := lastLine(out); path != "" {
			if _, statErr := os.Stat(path); statErr == nil {
				return path, ""
			}
		}
	}
	if path, lookErr := exec.LookPath("codex"); lookErr == nil {
		return path, ""
	}
	return "", fmt.Sprintf("the Codex CLI is not installed and %s could not install it (%v): install npm, then run it", inst, err)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// loggedIn reports whether the user's own Codex CLI is logged in.
func loggedIn(codex string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, codex, "login", "status").CombinedOutput()
	return err == nil && strings.Contains(strings.ToLower(string(out)), "logged in") && !strings.Contains(strings.ToLower(string(out)), "not logged in")
}

func (p *playground) printClientConfig() {
	if len(p.servers) == 0 {
		return
	}
	type entry struct {
		Type string `json:"type,omitempty"`
		URL  string `json:"url,omitempty"`
	}
	http := map[string]map[string]entry{"mcpServers": {}}
	for _, s := range p.servers {
		http["mcpServers"][s.name] = entry{Type: "http", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port)}
	}
	b, _ := json.MarshalIndent(http, "", "  ")
	fmt.Printf("\nPaste into your MCP client's configuration (Claude Desktop / VS Code style):\n%s\n", b)
	fmt.Println("\nOr run them over stdio yourself:")
	for _, s := range p.servers {
		fmt.Printf("  %s %s\n", strings.Join(s.env, " "), strings.Join(append([]string{s.bin}, s.args...), " "))
	}
}
