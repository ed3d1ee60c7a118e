package haproxy

import (
	"context"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

var update = flag.Bool("update", false, "capture testdata/<branch>/ from the real HAProxy binaries")

// captured lists the per-version fixtures: file name and the command whose
// raw answer it holds (with "set severity-output number", as proxymcp
// sends it). They run in this order on one fresh HAProxy per branch, so
// the add/del server pair sees the state the earlier ones left.
var captured = []struct{ file, cmd string }{
	{"help.txt", "help"},
	{"show_version.txt", "show version"},
	{"show_info.txt", "show info"},
	{"show_stat.txt", "show stat"},
	{"show_servers_state.txt", "show servers state"},
	{"show_servers_conn.txt", "show servers conn"},
	{"show_servers_conn_be_app.txt", "show servers conn be_app"},
	{"show_backend.txt", "show backend"},
	{"show_map.txt", "show map"},
	{"show_table_be_app.txt", "show table be_app"},
	{"show_sess.txt", "show sess"},
	{"show_ssl_cert.txt", "show ssl cert"},
	{"show_ssl_cert_site.txt", "show ssl cert $DIR/site.pem"},
	{"show_ssl_cert_nosuch.txt", "show ssl cert $DIR/nosuch.pem"},
	{"show_ssl_sni.txt", "show ssl sni"},
	{"add_server_help.txt", "add server help"},
	{"echo.txt", "echo hello"},
	{"frobnicate.txt", "frobnicate"},
	{"set_weight_nosuch.txt", "set weight be_app/nosuch 5"},
	{"add_server_exists.txt", "add server be_app/app1 127.0.0.1:1"},
	{"del_server_not_maint.txt", "del server be_app/app1"},
	{"wait_srv_removable_up.txt", "wait 100 srv-removable be_app/app1"},
	{"add_server_dyn.txt", "add server be_app/dyn1 127.0.0.1:1"},
	{"wait_srv_removable.txt", "wait 100 srv-removable be_app/dyn1"},
	{"del_server_dyn.txt", "del server be_app/dyn1"},
	// A server from the configuration (not added at run time), in maint.
	{"set_server_state_maint_app2.txt", "set server be_app/app2 state maint"},
	{"del_server_static.txt", "del server be_app/app2"},
}

// fixtureDir is where the fixtures of one branch live.
func fixtureDir(branch string) string { return filepath.Join("testdata", branch) }

// TestCaptureFixtures regenerates testdata/<branch>/ from each branch's
// real HAProxy when run with -update (all branches, whatever
// PROXYMCP_HAPROXY_VERSIONS says). The test directory's path is replaced by
// "$DIR" so the files stay stable.
func TestCaptureFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to capture the fixtures")
	}
	for _, branch := range haproxytest.Branches {
		t.Run(branch, func(t *testing.T) {
			t.Parallel()
			h := haproxytest.Run(t, haproxytest.Options{Version: branch, TLS: true})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := h.WaitServerStatus(ctx, "be_app", "app3", "DOWN"); err != nil {
				t.Fatal(err)
			}
			dir := fixtureDir(branch)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, c := range captured {
				out, err := rawCommand(ctx, h.Socket, strings.ReplaceAll(c.cmd, "$DIR", h.Dir))
				if err != nil {
					t.Fatalf("%s: %v", c.cmd, err)
				}
				out = strings.ReplaceAll(out, h.Dir, "$DIR")
				if err := os.WriteFile(filepath.Join(dir, c.file), []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// rawCommand sends one command the way proxymcp does and returns HAProxy's
// whole answer, untouched (the severity prefix included).
func rawCommand(ctx context.Context, socket, cmd string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, "set severity-output number;"+cmd+"\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}
