package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
)

// TestVersionMatrix runs the version-dependent tools on every HAProxy
// branch of PROXYMCP_HAPROXY_VERSIONS (scripts/test: 2.6, 3.0 and 3.2):
// what each branch has works, what it lacks is refused with the version
// needed and the version running, and version_info says the same.
func TestVersionMatrix(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.Run(t, haproxytest.Options{Version: branch, TLS: true})
		e := newEnv(t, h, h.Runtime("unix"), nil, Options{ServerVersion: "v-test"})
		is32, is30 := branch == "3.2", branch != "2.6"

		vi := e.call(t, "version_info", nil)
		if vi["haproxy_version"] != h.Version || vi["detected_from"] != "show version, help" {
			t.Errorf("version_info = %v %v, want %s detected from help", vi["haproxy_version"], vi["detected_from"], h.Version)
		}
		level := map[string]map[string]any{}
		for _, r := range list(t, vi, "tools") {
			level[r["tool"].(string)] = r
		}
		wantLevel := map[string]string{
			"show_ssl_cert": Supported, "list_ssl_certs": Supported, "show_servers_conn": Supported, "add_server": Supported,
			"del_server": Supported, "show_info": Supported,
			"show_ssl_sni": pick(is32, Supported, Unsupported), "list_add_server_keywords": pick(is32, Supported, Unsupported),
			"echo": pick(is32, Supported, Degraded), "wait_server_removable": pick(is30, Supported, Unsupported),
		}
		for tool, want := range wantLevel {
			r := level[tool]
			if r == nil || r["level"] != want {
				t.Errorf("version_info %s = %v, want %s", tool, r, want)
				continue
			}
			if want != Supported && !strings.Contains(r["reason"].(string), h.Version) {
				t.Errorf("version_info %s reason %q does not name the running version", tool, r["reason"])
			}
		}
		if len(level) != e.registered() {
			t.Errorf("version_info lists %d tools, %d registered", len(level), e.registered())
		}

		// TLS certificates: the one haproxytest generated and configured.
		certs := e.call(t, "list_ssl_certs", nil)
		if l, _ := certs["certificates"].([]any); len(l) != 1 || l[0] != h.TLSCertFile {
			t.Errorf("list_ssl_certs = %v", certs)
		}
		c := e.call(t, "show_ssl_cert", map[string]any{"file": h.TLSCertFile})["certificate"].(map[string]any)
		wantDays := float64(int(time.Until(h.TLSCert.NotAfter) / (24 * time.Hour)))
		if c["not_after"] != h.TLSCert.NotAfter.UTC().Format(time.RFC3339) || c["not_before"] != h.TLSCert.NotBefore.UTC().Format(time.RFC3339) ||
			c["days_remaining"] != wantDays || c["expired"] != false || c["file"] != h.TLSCertFile {
			t.Errorf("show_ssl_cert = %v, want not_after %s, %v days", c, h.TLSCert.NotAfter.UTC().Format(time.RFC3339), wantDays)
		}
		e.fail(t, "show_ssl_cert", map[string]any{"file": h.Dir + "/nosuch.pem"}, "Not found")

		// show ssl sni and add server help: 3.2+.
		if is32 {
			sni := e.call(t, "show_ssl_sni", map[string]any{"frontend": "fe_tls"})
			l := list(t, sni, "server_names")
			if len(l) != 3 || find(l, "sni", "www.proxymcp-test.example") == nil || l[0]["frontend"] != "fe_tls" || l[0]["days_remaining"] != wantDays {
				t.Errorf("show_ssl_sni = %v", l)
			}
			if n := e.call(t, "show_ssl_sni", map[string]any{"frontend": "fe_web"})["count"]; n != float64(0) {
				t.Errorf("show_ssl_sni on a frontend without TLS: %v entries", n)
			}
			kw := e.call(t, "list_add_server_keywords", nil)
			if l, _ := kw["keywords"].([]any); len(l) < 20 || !containsAny(l, "check") || !containsAny(l, "weight") {
				t.Errorf("list_add_server_keywords = %v", kw)
			}
		} else {
			e.fail(t, "show_ssl_sni", nil, `"show ssl sni" needs HAProxy 3.2 or newer; this HAProxy is `+h.Version, "Upgrade HAProxy")
			e.fail(t, "list_add_server_keywords", nil, `"add server help" needs HAProxy 3.2 or newer; this HAProxy is `+h.Version)
		}

		// show servers conn: the same columns on every branch, by name.
		conn := list(t, e.call(t, "show_servers_conn", map[string]any{"backend": "be_app"}), "servers")
		if len(conn) != 3 || find(conn, "bkname/svname", "be_app/app1") == nil {
			t.Errorf("show_servers_conn = %v", conn)
		}

		// wait srv-removable (3.0+) around a dynamic server's life.
		if is30 {
			if out := e.call(t, "wait_server_removable", map[string]any{"backend": "be_app", "server": "app1", "timeout_ms": 50}); out["removable"] != false {
				t.Errorf("an UP server is removable: %v", out)
			}
			e.call(t, "add_server", map[string]any{"backend": "be_app", "server": "dyn1", "address": "127.0.0.1", "port": 1})
			if out := e.call(t, "wait_server_removable", map[string]any{"backend": "be_app", "server": "dyn1"}); out["removable"] != true {
				t.Errorf("a new (MAINT) server is not removable: %v", out)
			}
			e.call(t, "del_server", map[string]any{"backend": "be_app", "server": "dyn1"})
			// HAProxy answers "Failed." for a server that does not exist too.
			e.fail(t, "wait_server_removable", map[string]any{"backend": "be_app", "server": "dyn1"}, `server "be_app/dyn1" not found`, "list_servers")
			e.fail(t, "wait_server_removable", map[string]any{"backend": "nosuch", "server": "app1"}, `server "nosuch/app1" not found`)
		} else {
			e.fail(t, "wait_server_removable", map[string]any{"backend": "be_app", "server": "app1"}, `"wait" needs HAProxy 3.0 or newer; this HAProxy is `+h.Version)
		}

		// echo: HAProxy's own where it has it.
		if by := e.call(t, "echo", map[string]any{"text": "hello world; x"})["answered_by"]; by != pick(is32, "haproxy", "proxymcp") {
			t.Errorf("echo answered by %v", by)
		}
		if out := e.call(t, "echo", map[string]any{"text": "hello world; x"})["text"]; out != "hello world; x" {
			t.Errorf("echo = %q", out)
		}
	})
}

// TestVersionToolsRefuseHostileInput: the new tools' arguments, over many
// encodings of an injected command, are refused before anything reaches
// HAProxy; the weight an injection would change is read before and after.
func TestVersionToolsRefuseHostileInput(t *testing.T) {
	haproxytest.EachVersion(t, func(t *testing.T, branch string) {
		h := haproxytest.Run(t, haproxytest.Options{Version: branch, TLS: true})
		e := newEnv(t, h, h.Runtime("unix"), nil, Options{})
		before := exec(t, h, "get weight be_app/app1")
		inject := []string{";set weight be_app/app1 7", "\nset weight be_app/app1 7", "\rset weight be_app/app1 7",
			"\x00;set weight be_app/app1 7", " ;set weight be_app/app1 7", "\\;set weight be_app/app1 7", "<<", " <<",
			"\tset weight be_app/app1 7", "\u2028set weight be_app/app1 7", "%3Bset%20weight", "&&set weight"}
		files := []string{"", "../../etc/passwd", h.Dir + "/../x.pem", "*" + h.TLSCertFile, "#1", "a b", "é.pem",
			strings.Repeat("a", 1025), "$(id)", "`id`", "'x'", "\"x\""}
		for _, s := range inject {
			files = append(files, h.TLSCertFile+s)
		}
		for _, f := range files {
			e.fail(t, "show_ssl_cert", map[string]any{"file": f}, `argument "file"`)
		}
		names := []string{"fe tls", "fe/tls", "fe_tls -A", "fe_tls -f fe_web", strings.Repeat("f", 129), "fé", "fe_tls%0a", "fe_tls,fe_web"}
		for _, s := range inject {
			names = append(names, "fe_tls"+s)
		}
		for _, n := range names {
			e.fail(t, "show_ssl_sni", map[string]any{"frontend": n}, `argument "frontend"`)
			e.fail(t, "wait_server_removable", map[string]any{"backend": n, "server": "app1"}, `argument "backend"`)
			e.fail(t, "wait_server_removable", map[string]any{"backend": "be_app", "server": n}, `argument "server"`)
		}
		for _, ms := range []any{0, -1, 5001, 2.5, "0x10", " 100", "1e3", 1e12, true, map[string]any{}, []any{100}} {
			e.fail(t, "wait_server_removable", map[string]any{"backend": "be_app", "server": "app1", "timeout_ms": ms}, `argument "timeout_ms"`)
		}
		for _, tool := range []string{"list_ssl_certs", "list_add_server_keywords"} {
			e.fail(t, tool, map[string]any{"extra": "x"}, `unknown argument "extra"`)
		}
		e.fail(t, "show_ssl_cert", map[string]any{"file": 5}, `argument "file"`)
		if branch == "3.2" {
			// "-A" is a legal proxy name: after "-f" HAProxy takes it as one,
			// not as the option that lists every bind line.
			e.fail(t, "show_ssl_sni", map[string]any{"frontend": "-A"}, "Couldn't find the specified frontend")
		}
		if after := exec(t, h, "get weight be_app/app1"); after != before {
			t.Fatalf("weight changed from %q to %q: an injection ran", before, after)
		}
	})
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func containsAny(l []any, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// registered counts the tools of e's server.
func (e *env) registered() int { return len(e.srv.ListTools()) }
