// Command imagecheck runs each server's container image, built by
// scripts/image-check, and checks what the image promises: --version prints
// the server and the VERSION it was built with; the process runs as a
// non-root user; with MCP_TRANSPORT=http the server answers /healthz; one
// real tool call or resource read works against the back end the tests use
// (kfake, Debian's haproxy, the Trino-protocol engine, the Codex CLI inside
// the codermcp image against the test model endpoint); and the image size,
// which must stay under 25 MB for the distroless images.
//
// Containers run with podman --runtime runc and --network host, so they
// reach the back ends on 127.0.0.1 and the server listens on 127.0.0.1 only.
//
//	go run ./tools/imagecheck -version v0.0.0-imagecheck streammcp proxymcp codermcp sqlmcp
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
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/tools/internal/serverhelp"
)

// DistrolessLimit is the most bytes a distroless server image may take
// (issue 17: under 25 MB). The Dockerfiles build with -tags grpcnotrace:
// gRPC's x/net/trace debug pages, never enabled here, link html/template,
// whose reflective method calls make the linker keep every exported method
// of every type, go-redis's whole command set included (about 10 MB).
const DistrolessLimit = 25_000_000

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs := flag.NewFlagSet("imagecheck", flag.ContinueOnError)
	version := fs.String("version", "", "VERSION the images were built with (required)")
	prefix := fs.String("image-prefix", "localhost/mcpfleet/", "image name prefix; the tag is :check")
	if err := fs.Parse(os.Args[1:]); err != nil || *version == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: imagecheck -version V SERVER...")
		os.Exit(2)
	}
	root, err := serverhelp.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagecheck:", err)
		os.Exit(1)
	}
	work, err := os.MkdirTemp("", "imagecheck-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagecheck:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(work)
	failed := false
	var rows []string
	for _, name := range fs.Args() {
		c := &check{root: root, work: filepath.Join(work, name), server: name, image: *prefix + name + ":check", version: *version}
		res := c.run(ctx)
		fmt.Println(res.String())
		rows = append(rows, res.row())
		if !res.ok() {
			failed = true
		}
	}
	fmt.Println("\nimage                                  size      user   version  healthz  call")
	for _, r := range rows {
		fmt.Println(r)
	}
	if failed {
		os.Exit(1)
	}
}

// result is what was found about one image.
type result struct {
	server, image string
	size          int64
	distroless    bool
	problems      []string
	uid           string
	versionOK     bool
	healthOK      bool
	call          string // what the real call showed
}

func (r *result) fail(format string, a ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, a...))
}
func (r *result) ok() bool { return len(r.problems) == 0 }

func (r *result) String() string {
	var b strings.Builder
	mark := "✓"
	if !r.ok() {
		mark = "✗"
	}
	fmt.Fprintf(&b, "%s %s (%s, %.1f MB)", mark, r.server, r.image, float64(r.size)/1e6)
	if r.call != "" {
		fmt.Fprintf(&b, "\n    call: %s", r.call)
	}
	for _, p := range r.problems {
		fmt.Fprintf(&b, "\n    problem: %s", p)
	}
	return b.String()
}

func (r *result) row() string {
	yes := func(b bool) string {
		if b {
			return "ok"
		}
		return "FAIL"
	}
	return fmt.Sprintf("%-36s %6.1f MB  %-6s %-8s %-8s %s", r.image, float64(r.size)/1e6, r.uid, yes(r.versionOK), yes(r.healthOK), yes(r.ok()))
}

type check struct {
	root, work, server, image, version string
}

func (c *check) run(ctx context.Context) *result {
	r := &result{server: c.server, image: c.image}
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		r.fail("%v", err)
		return r
	}
	c.size(ctx, r)
	c.versionFlag(ctx, r)
	env, stop, err := c.backend(ctx)
	if err != nil {
		r.fail("start the %s back end: %v", c.server, err)
		return r
	}
	defer stop()
	c.serve(ctx, r, env)
	return r
}

// podman runs podman the way this machine allows (see scripts/image-check).
func podman(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "podman", append([]string{"--runtime", "runc"}, args...)...)
}

func (c *check) size(ctx context.Context, r *result) {
	out, err := podman(ctx, "image", "inspect", "--format", "{{.Size}} {{.Config.User}}", c.image).Output()
	if err != nil {
		r.fail("podman image inspect %s: %v (was it built? run scripts/image-check)", c.image, err)
		return
	}
	f := strings.Fields(string(out))
	r.size, _ = strconv.ParseInt(f[0], 10, 64)
	df, _ := os.ReadFile(filepath.Join(c.root, c.server, "Dockerfile"))
	r.distroless = strings.Contains(string(df), "FROM gcr.io/distroless/")
	if r.distroless && r.size >= DistrolessLimit {
		r.fail("image is %.1f MB; a distroless image must stay under %.0f MB (is the Dockerfile's go build missing -tags grpcnotrace?)", float64(r.size)/1e6, float64(DistrolessLimit)/1e6)
	}
	if len(f) < 2 || f[1] == "" || f[1] == "root" || f[1] == "0" || strings.HasPrefix(f[1], "0:") {
		r.fail("the image's USER is %q: it must name a non-root user", strings.Join(f[1:], " "))
	}
}

func (c *check) versionFlag(ctx context.Context, r *result) {
	out, err := podman(ctx, "run", "--rm", "--network", "none", c.image, "--version").CombinedOutput()
	got := strings.TrimSpace(string(out))
	want := c.server + " " + c.version
	if err != nil || got != want {
		r.fail("--version printed %q (%v); want %q", got, err, want)
		return
	}
	r.versionOK = true
}

// serve runs the image with the HTTP transport, then checks who runs it,
// /healthz and one real call.
func (c *check) serve(ctx context.Context, r *result, env []string) {
	port, err := freePort()
	if err != nil {
		r.fail("%v", err)
		return
	}
	name := fmt.Sprintf("imagecheck-%s-%d", c.server, os.Getpid())
	args := []string{"run", "--rm", "-d", "--name", name, "--network", "host",
		"-e", "MCP_TRANSPORT=http", "-e", "MCP_HOST=127.0.0.1", "-e", "MCP_PORT=" + strconv.Itoa(port)}
	for _, e := range env {
		if strings.HasPrefix(e, "-v") {
			args = append(args, "-v", strings.TrimPrefix(e, "-v"))
			continue
		}
		args = append(args, "-e", e)
	}
	args = append(args, c.image)
	if out, err := podman(ctx, args...).CombinedOutput(); err != nil {
		r.fail("podman run: %v\n%s", err, out)
		return
	}
	defer func() {
		if !r.ok() {
			logs, _ := podman(context.Background(), "logs", "--tail", "30", name).CombinedOutput()
			r.fail("container log (last lines):\n%s", indent(string(logs)))
		}
		_ = podman(context.Background(), "rm", "-f", "-t", "5", name).Run()
	}()

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				r.healthOK = true
				break
			}
		}
		if time.Now().After(deadline) {
			r.fail("GET %s/healthz did not answer 200 within 60s (last: %v)", base, err)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}

	out, err := podman(ctx, "inspect", "--format", "{{.State.Pid}}", name).Output()
	pid := strings.TrimSpace(string(out))
	if err != nil {
		r.fail("podman inspect: %v", err)
	} else if uid, err := processUID(pid); err != nil {
		r.fail("read the server process's user: %v", err)
	} else {
		r.uid = uid
		if uid == "0" {
			r.fail("the server process runs as root (uid 0)")
		}
	}

	callCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	shown, err := c.call(callCtx, base+"/mcp")
	if err != nil {
		r.fail("MCP call: %v", err)
		return
	}
	r.call = shown
}

// processUID reads the real user id of a host process from /proc.
func processUID(pid string) (string, error) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "Uid:" {
			return f[1], nil
		}
	}
	return "", errors.New("no Uid line in /proc/" + pid + "/status")
}

// call connects a real MCP client (the official Go SDK over streamable HTTP)
// and makes the server's one real call.
func (c *check) call(ctx context.Context, endpoint string) (string, error) {
	cl := mcp.NewClient(&mcp.Implementation{Name: "mcpfleet-imagecheck", Version: c.version}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo; got == nil || got.Version != c.version {
		return "", fmt.Errorf("initialize: server info %+v; want version %s", got, c.version)
	}
	switch c.server {
	case "streammcp":
		return read(ctx, cs, "stream-mcp://overview", `"broker_count":3`)
	case "proxymcp":
		return callTool(ctx, cs, "list_servers", map[string]any{}, "be_app")
	case "sqlmcp":
		return callTool(ctx, cs, "execute_query", map[string]any{"query": "SELECT 41 + 1 AS answer", "limit": 1}, "42")
	case "codermcp":
		return callTool(ctx, cs, "coder", map[string]any{"prompt": "Say hello from the image check.", "sandbox": "read-only"}, "[playground canned reply]")
	}
	return "", fmt.Errorf("no call known for %s", c.server)
}

func read(ctx context.Context, cs *mcp.ClientSession, uri, want string) (string, error) {
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", uri, err)
	}
	if len(res.Contents) == 0 {
		return "", fmt.Errorf("read %s: no contents", uri)
	}
	text := compact(res.Contents[0].Text)
	if !strings.Contains(text, want) {
		return "", fmt.Errorf("read %s: %s lacks %s", uri, clip(text), want)
	}
	return "read " + uri + ": " + clip(text), nil
}

func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, want string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("call %s: %w", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	all := compact(strings.Join(text, "\n"))
	if res.IsError {
		return "", fmt.Errorf("call %s: tool error: %s", name, clip(all))
	}
	if !strings.Contains(all, want) {
		return "", fmt.Errorf("call %s: %s lacks %q", name, clip(all), want)
	}
	return "call " + name + ": " + clip(all), nil
}

// compact removes the indentation of a JSON text, for printing on one line.
func compact(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// backend builds and starts the command that runs the server's test back
// end (the playground's), waits for its one JSON ready line and returns the
// container environment that points the server at it.
func (c *check) backend(ctx context.Context) (env []string, stop func(), err error) {
	var pkg string
	var args []string
	switch c.server {
	case "streammcp":
		pkg = "./streammcp/internal/kafkatest/cmd/playkafka"
	case "proxymcp":
		pkg, args = "./proxymcp/internal/haproxytest/cmd/playhaproxy", []string{"-dir", filepath.Join(c.work, "haproxy")}
	case "sqlmcp":
		pkg = "./sqlmcp/internal/trinotest/cmd/playtrino"
	case "codermcp":
		pkg, args = "./codermcp/internal/codertest/cmd/playmodel", []string{"-dir", filepath.Join(c.work, "model")}
	default:
		return nil, nil, fmt.Errorf("no back end known for %s", c.server)
	}
	bin := filepath.Join(c.work, filepath.Base(pkg))
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	build.Dir = c.root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = c.work
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(90 * time.Second):
	case <-ctx.Done():
	}
	if line == "" {
		stop()
		return nil, nil, fmt.Errorf("%s printed no ready line; stderr:\n%s", bin, stderr.String())
	}
	var ready map[string]any
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		stop()
		return nil, nil, fmt.Errorf("ready line %q: %w", line, err)
	}
	s := func(k string) string { return fmt.Sprint(ready[k]) }
	switch c.server {
	case "streammcp":
		env = []string{"STREAM_BROKERS=" + s("brokers")}
	case "proxymcp":
		env = []string{"PROXY_RUNTIME_URL=" + s("runtime_url"), "PROXY_STATS_URL=" + s("stats_url"),
			"PROXY_STATS_USERNAME=" + s("stats_username"), "PROXY_STATS_PASSWORD=" + s("stats_password")}
	case "sqlmcp":
		env = []string{"SQLENGINE_HOST=" + s("host"), "SQLENGINE_PORT=" + strconv.Itoa(int(ready["port"].(float64))),
			"SQLENGINE_USER=imagecheck", "SQLENGINE_CATALOG=" + s("catalog"), "SQLENGINE_SCHEMA=" + s("schema")}
	case "codermcp":
		// The container's user (65532) must be able to write the CLI's
		// home, which lives on the host and is mounted at the same path.
		home := s("codex_home")
		if err := chmodAll(filepath.Join(c.work, "model")); err != nil {
			stop()
			return nil, nil, err
		}
		env = []string{"-v" + home + ":" + home, "CODER_HOME=" + home, "CODER_MODELS=" + s("model"), "CODER_DEFAULT_MODEL=" + s("model")}
	}
	return env, stop, nil
}

func chmodAll(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o666)
		if d.IsDir() {
			mode = 0o777
		}
		return os.Chmod(p, mode)
	})
}
