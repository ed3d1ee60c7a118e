package serve

import (
	"net/http"
	"strings"
	"testing"
)

// hostileHosts are Host values the guard must refuse whatever the allowed
// list says (issue 12 item 10).
var hostileHosts = []string{
	"",
	" ",
	"127.0.0.1:8080.evil.com",
	"127.0.0.1:8080evil",
	"127.0.0.1:",
	"127.0.0.1:0",
	"127.0.0.1:00",
	"127.0.0.1:080",
	"127.0.0.1:65536",
	"127.0.0.1:99999",
	"127.0.0.1:123456",
	"127.0.0.1:0x50",
	"127.0.0.1:+80",
	"127.0.0.1:-80",
	"127.0.0.1: 80",
	"127.0.0.1:80 ",
	"127.0.0.1:8080:80",
	"127.0.0.1::80",
	"127.0.0.1:８０",       // fullwidth digits
	"127.0.0.1:٨٠",       // Arabic-Indic digits
	"１２７.0.0.1",          // fullwidth host digits
	"127.0.0.1.",         // trailing dot
	"localhost.",         // trailing dot
	"localhost..",        // empty label
	".localhost",         // leading dot
	"localhost.:8080",    // trailing dot with port
	"a@127.0.0.1",        // userinfo
	"a:b@127.0.0.1:8080", // userinfo with password
	"127.0.0.1%2e",       // percent-encoding
	"127%2e0.0.1",
	"%6c%6f%63%61%6c%68%6f%73%74",
	"127.0.0.1/evil",
	"127.0.0.1\\evil",
	"127.0.0.1?x",
	"127.0.0.1#x",
	"127.0.0.1 evil.com",
	"127.0.0.1\tevil.com",
	"evil.com,127.0.0.1",
	"evil.com 127.0.0.1",
	"::1",               // IPv6 without brackets
	"::1:8080",          // ambiguous
	"[::1",              // unclosed
	"[::1]]",            // junk after ]
	"[::1]x",            // junk after ]
	"[::1]:",            // empty port
	"[::1]:0",           // port 0
	"[::1]:8080:80",     // two ports
	"[127.0.0.1]",       // IPv4 in brackets
	"[fe80::1%25eth0]",  // zone
	"[fe80::1%eth0]",    // zone
	"[]",                // empty brackets
	"[localhost]",       // name in brackets
	"-localhost",        // hyphen at a label's start
	"localhost-",        // hyphen at a label's end
	"lοcalhost",         // Greek omicron
	"xn--lcalhost-?",    // junk in a punycode label
	"localhost\x00",     // NUL
	"localhost\r\nX: y", // header injection
	"a_b.example",       // underscore
}

// goodHosts are well-formed, whatever the allowed list says.
var goodHosts = map[string]string{
	"127.0.0.1":              "127.0.0.1",
	"127.0.0.1:8080":         "127.0.0.1",
	"127.0.0.1:1":            "127.0.0.1",
	"127.0.0.1:65535":        "127.0.0.1",
	"LOCALHOST:8080":         "localhost",
	"localhost":              "localhost",
	"[::1]":                  "::1",
	"[::1]:8080":             "::1",
	"[::FFFF:127.0.0.1]:443": "::ffff:127.0.0.1",
	"mcp.example.com":        "mcp.example.com",
	"xn--bcher-kva.example":  "xn--bcher-kva.example",
}

func TestParseHostPort(t *testing.T) {
	for _, h := range hostileHosts {
		if got, err := parseHostPort(h); err == nil {
			t.Errorf("parseHostPort(%q) = %q, want an error", h, got)
		}
		for _, scheme := range []string{"http://", "https://"} {
			if got, err := parseOrigin(scheme + h); err == nil {
				t.Errorf("parseOrigin(%q) = %q, want an error", scheme+h, got)
			}
		}
	}
	for h, want := range goodHosts {
		if got, err := parseHostPort(h); err != nil || got != want {
			t.Errorf("parseHostPort(%q) = %q, %v; want %q", h, got, err, want)
		}
		if got, err := parseOrigin("http://" + h); err != nil || got != want {
			t.Errorf("parseOrigin(http://%s) = %q, %v; want %q", h, got, err, want)
		}
	}
	t.Logf("%d hostile Host values, %d as Origin", len(hostileHosts), 2*len(hostileHosts))
}

// hostileOrigins are Origin values refused even though their host would be
// allowed.
var hostileOrigins = []string{
	"null",
	"NULL",
	"null ",
	"",
	"127.0.0.1",
	"//127.0.0.1",
	"http:/127.0.0.1",
	"http:127.0.0.1",
	"HTTP://127.0.0.1",
	"ftp://127.0.0.1",
	"file://",
	"file:///etc/passwd",
	"javascript://127.0.0.1",
	"ws://127.0.0.1",
	"chrome-extension://abcdef",
	"http://127.0.0.1/",
	"http://127.0.0.1/path",
	"http://127.0.0.1?q",
	"http://127.0.0.1#f",
	"http://user@127.0.0.1",
	"http://127.0.0.1@evil.com",
	"http://evil.com#@127.0.0.1",
	"http://evil.com\\@127.0.0.1",
	"http://127.0.0.1:8080.evil.com",
	"http://127.0.0.1:8080:80",
	"http://127.0.0.1:",
	"http://127.0.0.1.",
	"http://127.0.0.1%2e",
	" http://127.0.0.1",
	"http://127.0.0.1 http://evil.com",
}

func TestParseOriginRefusesHostile(t *testing.T) {
	for _, o := range hostileOrigins {
		if got, err := parseOrigin(o); err == nil {
			t.Errorf("parseOrigin(%q) = %q, want an error", o, got)
		}
	}
}

// TestHostGuardOverHTTP sends every hostile Host and Origin, byte for byte,
// to the real HTTP surface: each is refused (403 from the guard, or 400
// where net/http itself refuses the header first) and the tool never runs.
// Controls: the same call with a good Host (and Origin) reaches the tool.
func TestHostGuardOverHTTP(t *testing.T) {
	p := newInproc(t, Config{}, nil)
	okStatus := func(code int) bool { return code == http.StatusForbidden || code == http.StatusBadRequest }
	for _, h := range append(hostileHosts, "127.0.0.1:"+strings.Split(p.addr, ":")[1]+".evil.com") {
		if strings.ContainsAny(h, "\r\n") || strings.TrimSpace(h) != h {
			continue // one header line cannot carry it: net/textproto trims
		}
		for _, path := range []string{"/mcp", "/sse", "/message?sessionId=x"} {
			head := strings.Replace(post(h, len(callMsg)), "/mcp", path, 1)
			resp, body := p.raw(t, head, strings.NewReader(callMsg))
			if !okStatus(resp.StatusCode) {
				t.Errorf("Host %q on %s: HTTP %d %s", h, path, resp.StatusCode, body)
			}
		}
	}
	good := p.addr
	for _, o := range append(hostileOrigins, "http://evil.com", "http://127.0.0.1.evil.com", "http://localhost:"+strings.Split(p.addr, ":")[1]+".evil.com") {
		if strings.TrimSpace(o) != o || o == "" {
			continue // net/textproto trims; an empty Origin is no Origin
		}
		resp, body := p.raw(t, post(good, len(callMsg), "Origin: "+o), strings.NewReader(callMsg))
		if !okStatus(resp.StatusCode) {
			t.Errorf("Origin %q: HTTP %d %s", o, resp.StatusCode, body)
		}
	}
	// Two Origin headers, one good: refused.
	if resp, _ := p.raw(t, post(good, len(callMsg), "Origin: http://127.0.0.1", "Origin: null"), strings.NewReader(callMsg)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("two Origin headers: HTTP %d", resp.StatusCode)
	}
	if n := p.calls.Load(); n != 0 {
		t.Fatalf("the tool ran %d times behind refused Host/Origin headers", n)
	}
	// Controls.
	for _, extra := range [][]string{nil, {"Origin: http://" + good}, {"Origin: http://localhost"}, {"Origin: https://[::1]:443"}} {
		resp, body := p.raw(t, post(good, len(initializeMsg), extra...), strings.NewReader(initializeMsg))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("good Host %s with %q: HTTP %d %s", good, extra, resp.StatusCode, body)
		}
	}
}
