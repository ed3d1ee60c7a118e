package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func read(env map[string]string) (Config, error) {
	r := envconfig.New(func(k string) string { return env[k] })
	c := FromEnv(r)
	return c, r.Err()
}

func TestDefaults(t *testing.T) {
	c, err := read(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{RuntimeEnabled: true, RuntimeNetwork: "tcp4", RuntimeAddress: "127.0.0.1:9999", RuntimeTimeout: 10 * time.Second,
		RuntimeMaxConns: 4, StatsEnabled: true, StatsURL: "http://127.0.0.1:8404/stats", StatsTimeout: 5 * time.Second}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestVariables(t *testing.T) {
	for _, tc := range []struct {
		env              map[string]string
		network, address string
	}{
		{map[string]string{"PROXY_RUNTIME_MODE": "unix"}, "unix", "/var/run/proxy/admin.sock"},
		{map[string]string{"PROXY_RUNTIME_MODE": "unix", "PROXY_RUNTIME_SOCKET": "/run/a.sock"}, "unix", "/run/a.sock"},
		{map[string]string{"PROXY_HOST": "10.0.0.1", "PROXY_PORT": "9000"}, "tcp4", "10.0.0.1:9000"},
		{map[string]string{"PROXY_RUNTIME_URL": "tcp://127.0.0.2:7000", "PROXY_RUNTIME_MODE": "unix"}, "tcp4", "127.0.0.2:7000"},
		{map[string]string{"PROXY_RUNTIME_URL": "unix:///run/h.sock"}, "unix", "/run/h.sock"},
		{map[string]string{"PROXY_RUNTIME_URL": "unix:/run/h.sock"}, "unix", "/run/h.sock"},
		{map[string]string{"PROXY_RUNTIME_URL": "/run/h.sock"}, "unix", "/run/h.sock"},
		{map[string]string{"PROXY_RUNTIME_URL": "ipv4@127.0.0.1:9999"}, "tcp4", "127.0.0.1:9999"},
	} {
		c, err := read(tc.env)
		if err != nil || c.RuntimeNetwork != tc.network || c.RuntimeAddress != tc.address {
			t.Errorf("%v: %s %s %v", tc.env, c.RuntimeNetwork, c.RuntimeAddress, err)
		}
	}
	c, err := read(map[string]string{"PROXY_RUNTIME_TIMEOUT": "2s", "PROXY_STATS_TIMEOUT": "3", "PROXY_READ_ONLY": "true",
		"PROXY_STATS_URL": "http://u:p%40ss@h:1/stats", "PROXY_RUNTIME_ENABLED": "false"})
	if err != nil || c.RuntimeTimeout != 2*time.Second || c.StatsTimeout != 3*time.Second || !c.ReadOnly ||
		c.StatsUsername != "u" || c.StatsPassword != "p@ss" || c.StatsURL != "http://h:1/stats" || c.RuntimeEnabled || c.RuntimeAddress != "" {
		t.Errorf("%+v %v", c, err)
	}
}

func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PROXY_RUNTIME_ENABLED": "false", "PROXY_STATS_ENABLED": "false"}, "at least one back end"},
		{map[string]string{"PROXY_RUNTIME_MODE": "udp"}, "PROXY_RUNTIME_MODE"},
		{map[string]string{"PROXY_PORT": "70000"}, "PROXY_PORT"},
		{map[string]string{"PROXY_RUNTIME_URL": "http://x:1"}, "PROXY_RUNTIME_URL"},
		{map[string]string{"PROXY_RUNTIME_URL": "tcp://nohost"}, "PROXY_RUNTIME_URL"},
		{map[string]string{"PROXY_RUNTIME_TIMEOUT": "soon"}, "PROXY_RUNTIME_TIMEOUT"},
		{map[string]string{"PROXY_STATS_URL": "ftp://x/stats"}, "PROXY_STATS_URL"},
		{map[string]string{"PROXY_READ_ONLY": "maybe"}, "PROXY_READ_ONLY"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "0"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "10"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "-1"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "4.5"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "four"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "0x4"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "4;9"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "99999999999999999999"}, "PROXY_RUNTIME_MAX_CONNS"},
		{map[string]string{"PROXY_RUNTIME_MAX_CONNS": "1e1"}, "PROXY_RUNTIME_MAX_CONNS"},
	} {
		_, err := read(tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v", tc.env, err)
		}
	}
	for _, v := range []string{"1", "4", "9", " 9 "} {
		if c, err := read(map[string]string{"PROXY_RUNTIME_MAX_CONNS": v}); err != nil || fmt.Sprint(c.RuntimeMaxConns) != strings.TrimSpace(v) {
			t.Errorf("PROXY_RUNTIME_MAX_CONNS=%q: %d %v", v, c.RuntimeMaxConns, err)
		}
	}
	// An invalid mode is an error whatever overrides it (PROXY_RUNTIME_URL
	// in any of its spellings) and whatever it looks like.
	for _, mode := range []string{"udp", "tcp", "tcp6", "unixgram", "unix4", "tcp4;unix", "unix\x00", "tcp4\nunix", "tcp4 unix", "'unix'", "%75nix", "ünix", "0", "true", strings.Repeat("u", 4096)} {
		for _, url := range []string{"", "tcp://127.0.0.1:9999", "unix:///run/h.sock", "/run/h.sock", "ipv4@127.0.0.1:9999"} {
			env := map[string]string{"PROXY_RUNTIME_MODE": mode}
			if url != "" {
				env["PROXY_RUNTIME_URL"] = url
			}
			if _, err := read(env); err == nil || !strings.Contains(err.Error(), "PROXY_RUNTIME_MODE") {
				t.Errorf("mode %.20q url %q: err = %v", mode, url, err)
			}
		}
	}
	// Valid modes in any case (surrounding white space is trimmed, as for
	// every variable) still work next to a URL, and the URL wins.
	for _, mode := range []string{"tcp4", "unix", "UNIX", "Tcp4", " unix\n"} {
		c, err := read(map[string]string{"PROXY_RUNTIME_MODE": mode, "PROXY_RUNTIME_URL": "tcp://127.0.0.2:7000"})
		if err != nil || c.RuntimeNetwork != "tcp4" || c.RuntimeAddress != "127.0.0.2:7000" {
			t.Errorf("mode %q with URL: %+v %v", mode, c, err)
		}
	}
	// With the runtime API disabled the mode is not read at all.
	if _, err := read(map[string]string{"PROXY_RUNTIME_ENABLED": "false", "PROXY_RUNTIME_MODE": "udp"}); err != nil {
		t.Errorf("runtime disabled: %v", err)
	}
	// Only the stats page: host and port are not needed (and not read).
	if _, err := read(map[string]string{"PROXY_RUNTIME_ENABLED": "false", "PROXY_PORT": "bogus"}); err != nil {
		t.Errorf("stats only: %v", err)
	}
}
