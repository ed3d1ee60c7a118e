package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func readFleet(env map[string]string) (Fleet, error) {
	r := envconfig.New(func(k string) string { return env[k] })
	f := FleetFromEnv(r)
	return f, r.Err()
}

// Without PROXY_INSTANCES the seed's variables give one instance named
// "default", exactly the configuration FromEnv reads.
func TestFleetWithoutInstancesIsTheSeed(t *testing.T) {
	for _, env := range []map[string]string{
		nil,
		{"PROXY_RUNTIME_URL": "unix:///run/h.sock", "PROXY_STATS_USERNAME": "u", "PROXY_STATS_PASSWORD": "p", "PROXY_READ_ONLY": "true"},
		{"PROXY_HOST": "10.0.0.1", "PROXY_PORT": "9000", "PROXY_STATS_ENABLED": "false"},
		// Per-instance variables mean nothing without PROXY_INSTANCES.
		{"PROXY_DEFAULT_RUNTIME_URL": "tcp://10.9.9.9:1", "PROXY_LB1_STATS_URL": "http://x/stats"},
	} {
		f, err := readFleet(env)
		want, werr := read(env)
		if err != nil || werr != nil {
			t.Fatalf("%v: %v / %v", env, err, werr)
		}
		if f.Members.Named || len(f.Instances) != 1 || f.Instances[0].Name != "default" || f.Instances[0].Config != want || f.ReadOnly != want.ReadOnly {
			t.Errorf("%v: got %+v, want one instance default with %+v", env, f, want)
		}
	}
}

func TestFleetInstances(t *testing.T) {
	f, err := readFleet(map[string]string{
		"PROXY_INSTANCES":             " lb1 , LB_2,edge3",
		"PROXY_LB1_RUNTIME_URL":       "tcp://10.0.0.11:9999",
		"PROXY_LB1_STATS_URL":         "http://10.0.0.11:8404/stats",
		"PROXY_LB_2_RUNTIME_URL":      "unix:///run/lb2.sock",
		"PROXY_LB_2_STATS_URL":        "http://own:pw2@10.0.0.12:8404/stats",
		"PROXY_LB_2_STATS_USERNAME":   "lb2user",
		"PROXY_EDGE3_RUNTIME_ENABLED": "false",
		"PROXY_EDGE3_STATS_URL":       "https://10.0.0.13/stats",
		"PROXY_EDGE3_STATS_PASSWORD":  "pw3",
		// Shared: credentials given once, timeouts, the connection limit.
		"PROXY_STATS_USERNAME":    "shared",
		"PROXY_STATS_PASSWORD":    "sharedpw",
		"PROXY_RUNTIME_TIMEOUT":   "3s",
		"PROXY_STATS_TIMEOUT":     "2",
		"PROXY_RUNTIME_MAX_CONNS": "2",
		"PROXY_READ_ONLY":         "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Instance{
		{Name: "lb1", Config: Config{RuntimeEnabled: true, RuntimeNetwork: "tcp4", RuntimeAddress: "10.0.0.11:9999", RuntimeTimeout: 3 * time.Second, RuntimeMaxConns: 2,
			StatsEnabled: true, StatsURL: "http://10.0.0.11:8404/stats", StatsUsername: "shared", StatsPassword: "sharedpw", StatsTimeout: 2 * time.Second}},
		{Name: "LB_2", Config: Config{RuntimeEnabled: true, RuntimeNetwork: "unix", RuntimeAddress: "/run/lb2.sock", RuntimeTimeout: 3 * time.Second, RuntimeMaxConns: 2,
			// The instance's own user name wins over its URL's; its URL's
			// password wins over nothing, but the shared password is set:
			// as for the seed, the variable beats the URL.
			StatsEnabled: true, StatsURL: "http://10.0.0.12:8404/stats", StatsUsername: "lb2user", StatsPassword: "sharedpw", StatsTimeout: 2 * time.Second}},
		{Name: "edge3", Config: Config{RuntimeTimeout: 3 * time.Second,
			StatsEnabled: true, StatsURL: "https://10.0.0.13/stats", StatsUsername: "shared", StatsPassword: "pw3", StatsTimeout: 2 * time.Second}},
	}
	if !f.Members.Named || !f.ReadOnly || !reflect.DeepEqual(f.Instances, want) {
		t.Errorf("got  %+v\nwant %+v", f.Instances, want)
	}
	if got := f.Members.Names; !reflect.DeepEqual(got, []string{"lb1", "LB_2", "edge3"}) {
		t.Errorf("names %v", got)
	}
}

// Every bad or missing per-instance setting is reported at once, naming the
// instance and the variable; secrets are not echoed.
func TestFleetProblems(t *testing.T) {
	base := func(extra map[string]string) map[string]string {
		env := map[string]string{"PROXY_INSTANCES": "lb1,lb2",
			"PROXY_LB1_RUNTIME_URL": "tcp://10.0.0.1:9999", "PROXY_LB1_STATS_URL": "http://10.0.0.1:8404/stats",
			"PROXY_LB2_RUNTIME_URL": "tcp://10.0.0.2:9999", "PROXY_LB2_STATS_URL": "http://10.0.0.2:8404/stats"}
		for k, v := range extra {
			if v == "" {
				delete(env, k)
			} else {
				env[k] = v
			}
		}
		return env
	}
	if _, err := readFleet(base(nil)); err != nil {
		t.Fatalf("valid base: %v", err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"missing runtime URL", base(map[string]string{"PROXY_LB2_RUNTIME_URL": ""}), []string{"instance lb2: PROXY_LB2_RUNTIME_URL: not set", "PROXY_LB2_RUNTIME_ENABLED=false"}},
		{"missing stats URL", base(map[string]string{"PROXY_LB1_STATS_URL": ""}), []string{"instance lb1: PROXY_LB1_STATS_URL: not set"}},
		{"bad runtime URL", base(map[string]string{"PROXY_LB1_RUNTIME_URL": "http://x:1"}), []string{`instance lb1: PROXY_LB1_RUNTIME_URL="http://x:1": invalid`}},
		{"bad stats URL", base(map[string]string{"PROXY_LB2_STATS_URL": "ftp://x/stats"}), []string{`instance lb2: PROXY_LB2_STATS_URL="ftp://x/stats"`}},
		{"bad enabled", base(map[string]string{"PROXY_LB2_STATS_ENABLED": "maybe"}), []string{`instance lb2: PROXY_LB2_STATS_ENABLED="maybe"`}},
		{"both disabled", base(map[string]string{"PROXY_LB1_STATS_ENABLED": "no", "PROXY_LB1_RUNTIME_ENABLED": "0"}), []string{"instance lb1: PROXY_LB1_RUNTIME_ENABLED", "at least one back end"}},
		{"bad shared fallback", base(map[string]string{"PROXY_LB1_RUNTIME_URL": "", "PROXY_LB2_RUNTIME_URL": "", "PROXY_RUNTIME_URL": "nope://x"}),
			[]string{"instance lb1: PROXY_RUNTIME_URL (used because PROXY_LB1_RUNTIME_URL is unset)", "instance lb2: PROXY_RUNTIME_URL (used because PROXY_LB2_RUNTIME_URL is unset)"}},
		{"shared runtime URL", base(map[string]string{"PROXY_LB1_RUNTIME_URL": "", "PROXY_LB2_RUNTIME_URL": "", "PROXY_RUNTIME_URL": "tcp://10.0.0.1:9999"}),
			[]string{"instance lb2: PROXY_LB2_RUNTIME_URL", "instance lb1 already uses tcp4 10.0.0.1:9999"}},
		{"same stats page", base(map[string]string{"PROXY_LB2_STATS_URL": "http://10.0.0.1:8404/stats"}), []string{"instance lb2: PROXY_LB2_STATS_URL", "instance lb1 already uses"}},
		{"empty name", base(map[string]string{"PROXY_INSTANCES": "lb1,,lb2"}), []string{"PROXY_INSTANCES", "without empty items"}},
		{"reserved all", base(map[string]string{"PROXY_INSTANCES": "lb1,ALL"}), []string{"PROXY_INSTANCES", `other than "all"`}},
		{"bad name", base(map[string]string{"PROXY_INSTANCES": "lb1,lb.2"}), []string{"PROXY_INSTANCES", `"lb.2" is not`}},
		{"duplicate name", base(map[string]string{"PROXY_INSTANCES": "lb1,LB1,lb2"}), []string{"PROXY_INSTANCES", `"lb1" and "LB1"`}},
		{"shared variable still checked", base(map[string]string{"PROXY_RUNTIME_TIMEOUT": "soon"}), []string{"PROXY_RUNTIME_TIMEOUT"}},
	} {
		_, err := readFleet(tc.env)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", tc.name, w, err)
			}
		}
	}
	// A rejected per-instance password is never echoed (a URL's password is redacted).
	_, err := readFleet(base(map[string]string{"PROXY_LB1_STATS_URL": "ftp://u:hunter2@x/stats"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "instance lb1: PROXY_LB1_STATS_URL") {
		t.Errorf("secret in URL: %v", err)
	}
	// Several problems in one run, all reported.
	_, err = readFleet(base(map[string]string{"PROXY_LB1_RUNTIME_URL": "bad", "PROXY_LB2_STATS_URL": ""}))
	if err == nil || !strings.Contains(err.Error(), "PROXY_LB1_RUNTIME_URL") || !strings.Contains(err.Error(), "PROXY_LB2_STATS_URL") {
		t.Errorf("not every problem: %v", err)
	}
}

func TestInstanceVar(t *testing.T) {
	if got := Instances.Var("lb_1", "PROXY_STATS_URL"); got != "PROXY_LB_1_STATS_URL" {
		t.Error(got)
	}
}
