package envconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	proxy = Members{Prefix: "PROXY", List: "INSTANCES", Noun: "instance", Target: EveryMember,
		Own: []string{"PROXY_RUNTIME_URL", "PROXY_STATS_URL", "PROXY_STATS_USERNAME", "PROXY_STATS_PASSWORD", "PROXY_RUNTIME_ENABLED", "PROXY_STATS_ENABLED"}}
	stream = Members{Prefix: "STREAM", List: "CLUSTERS", Noun: "cluster", Target: FirstMember,
		Own: []string{"STREAM_BROKERS", "STREAM_SASL_MECHANISM", "STREAM_SASL_USERNAME", "STREAM_SASL_PASSWORD", "STREAM_TLS_ENABLED",
			"STREAM_EXPECTED_BROKERS", "STREAM_LAG_THRESHOLD"}}
)

// Every name either server's tests use, and the edges of the one rule.
func TestMemberNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     Members
		list  string
		names []string // kept
		err   []string // parts of the error; nil = none
	}{
		{"proxymcp names, spaces trimmed", proxy, " lb1 , LB_2,edge3", []string{"lb1", "LB_2", "edge3"}, nil},
		{"streammcp names", stream, "prod, staging-eu,dev", []string{"prod", "staging-eu", "dev"}, nil},
		{"a hyphen, once streammcp's only, now anyone's", proxy, "lb1,lb-2", []string{"lb1", "lb-2"}, nil},
		{"upper case, once proxymcp's only, now anyone's", stream, "prod,Staging", []string{"prod", "Staging"}, nil},
		{"63 characters", stream, strings.Repeat("a", 63), []string{strings.Repeat("a", 63)}, nil},
		{"all is a cluster name where no word selects every member", stream, "all,prod", []string{"all", "prod"}, nil},
		{"without the list: one member named default", proxy, "", []string{"default"}, nil},
		{"empty item (proxymcp)", proxy, "lb1,,lb2", []string{"lb1", "lb2"}, []string{"PROXY_INSTANCES", "without empty items"}},
		{"empty item (streammcp)", stream, "prod,,dev", []string{"prod", "dev"}, []string{"STREAM_CLUSTERS", `"" is not one`}},
		{"reserved all, any case", proxy, "lb1,ALL", []string{"lb1"}, []string{"PROXY_INSTANCES", `other than "all", which selects every instance`}},
		{"same variables by case", proxy, "lb1,LB1,lb2", []string{"lb1", "lb2"}, []string{"PROXY_INSTANCES", `"lb1" and "LB1"`, "PROXY_LB1_*"}},
		{"same variables by - and _", stream, "prod-eu,prod_eu", []string{"prod-eu"}, []string{"STREAM_CLUSTERS", `"prod-eu" and "prod_eu"`, "STREAM_PROD_EU_*"}},
		{"64 characters", stream, strings.Repeat("a", 64), nil, []string{"at most 63"}},
		{"leading -", stream, "-a", nil, []string{`"-a" is not one`}},
		{"leading _", proxy, "_a", nil, []string{`"_a" is not one`}},
		{"dot", proxy, "lb.1", nil, []string{`"lb.1" is not one`}},
		{"inner space", proxy, "lb 1", nil, []string{`"lb 1" is not one`}},
		{"every problem at once", proxy, "a.b,,all", nil, []string{`"a.b" is not one`, "without empty items", `other than "all"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(env(tc.m.ListVar(), tc.list))
			f := tc.m.Read(r)
			if !reflect.DeepEqual(f.Names, tc.names) {
				t.Errorf("names %q, want %q", f.Names, tc.names)
			}
			if f.Named != (tc.list != "") {
				t.Errorf("Named %v", f.Named)
			}
			err := r.Err()
			if (err != nil) != (tc.err != nil) {
				t.Fatalf("err %v", err)
			}
			for _, w := range tc.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestMemberVar(t *testing.T) {
	for _, tc := range []struct {
		m          Members
		name, v, w string
	}{
		{proxy, "lb_1", "PROXY_STATS_URL", "PROXY_LB_1_STATS_URL"},
		{proxy, "LB_2", "PROXY_RUNTIME_URL", "PROXY_LB_2_RUNTIME_URL"},
		{proxy, "edge3", "PROXY_RUNTIME_ENABLED", "PROXY_EDGE3_RUNTIME_ENABLED"},
		{stream, "prod-eu", "STREAM_BROKERS", "STREAM_PROD_EU_BROKERS"},
		{stream, "staging-eu", "STREAM_SASL_PASSWORD", "STREAM_STAGING_EU_SASL_PASSWORD"},
	} {
		if got := tc.m.Var(tc.name, tc.v); got != tc.w {
			t.Errorf("Var(%s, %s) = %s, want %s", tc.name, tc.v, got, tc.w)
		}
	}
}

// One member's typed variables: its own first, the unprefixed one when its
// own is unset or blank, fleet-wide variables always unprefixed.
func TestMemberReaders(t *testing.T) {
	r := New(env(
		"STREAM_CLUSTERS", "prod,staging-eu",
		"STREAM_PROD_BROKERS", "p1:9092,p2:9092",
		"STREAM_BROKERS", "k:9092",
		"STREAM_STAGING_EU_BROKERS", "  ", // blank: falls back
		"STREAM_PROD_TLS_ENABLED", "yes",
		"STREAM_TLS_ENABLED", "false",
		"STREAM_STAGING_EU_LAG_THRESHOLD", "5",
		"STREAM_LAG_THRESHOLD", "1000",
		"STREAM_PROD_SASL_PASSWORD", " p w ",
		"STREAM_SASL_PASSWORD", "shared",
		"STREAM_TIMEOUT", "2s",
		"STREAM_PROD_TIMEOUT", "9s", // not one of Own: means nothing
		"STREAM_SASL_MECHANISM", "PLAIN",
	))
	f := stream.Read(r)
	type got struct {
		brokers []string
		tls     bool
		lag     int
		pw      string
		timeout time.Duration
		mech    string
	}
	read := func(name string) got {
		m := f.Member(name)
		defer m.Done()
		return got{m.List("STREAM_BROKERS", nil), m.Bool("STREAM_TLS_ENABLED", false), m.Int("STREAM_LAG_THRESHOLD", 0, 0, 1<<30),
			m.Secret("STREAM_SASL_PASSWORD"), m.Duration("STREAM_TIMEOUT", time.Second, 0), m.String("STREAM_SASL_MECHANISM", "")}
	}
	if g := read("prod"); !reflect.DeepEqual(g, got{[]string{"p1:9092", "p2:9092"}, true, 1000, " p w ", 2 * time.Second, "PLAIN"}) {
		t.Errorf("prod %+v", g)
	}
	if g := read("staging-eu"); !reflect.DeepEqual(g, got{[]string{"k:9092"}, false, 5, "shared", 2 * time.Second, "PLAIN"}) {
		t.Errorf("staging-eu %+v", g)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}

	// Without the list variable, per-member variables mean nothing and the
	// one member reads the unprefixed variables.
	r = New(env("PROXY_RUNTIME_URL", "unix:///run/h.sock", "PROXY_DEFAULT_RUNTIME_URL", "tcp://10.9.9.9:1", "PROXY_LB1_STATS_URL", "http://x/stats"))
	pf := proxy.Read(r)
	m := pf.Member(pf.Names[0])
	if got := m.String("PROXY_RUNTIME_URL", ""); got != "unix:///run/h.sock" || m.String("PROXY_STATS_URL", "") != "" || m.Var("PROXY_RUNTIME_URL") != "PROXY_RUNTIME_URL" {
		t.Errorf("default member read %q", got)
	}
	m.Done()
}

// Each problem names the member and the variable that was read; a
// fleet-wide problem is named once; a secret is never echoed.
func TestMemberProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Members
		env  []string
		read func(m *Member)
		want []string
		not  []string
	}{
		{"own variable invalid", proxy, []string{"PROXY_INSTANCES", "lb1,lb2", "PROXY_LB1_RUNTIME_ENABLED", "maybe"},
			func(m *Member) { m.Bool("PROXY_RUNTIME_ENABLED", true) },
			[]string{`instance lb1: PROXY_LB1_RUNTIME_ENABLED="maybe": invalid; accepted: one of`}, []string{"lb2"}},
		{"fallback invalid", proxy, []string{"PROXY_INSTANCES", "lb1,lb2", "PROXY_STATS_ENABLED", "perhaps"},
			func(m *Member) { m.Bool("PROXY_STATS_ENABLED", true) },
			[]string{`instance lb1: PROXY_STATS_ENABLED (used because PROXY_LB1_STATS_ENABLED is unset)="perhaps": invalid`,
				`instance lb2: PROXY_STATS_ENABLED (used because PROXY_LB2_STATS_ENABLED is unset)="perhaps": invalid`}, nil},
		{"missing, no fallback", stream, []string{"STREAM_CLUSTERS", "prod,dev", "STREAM_PROD_BROKERS", "p:1"},
			func(m *Member) { m.Required("STREAM_BROKERS", "host:port list") },
			[]string{"cluster dev: STREAM_DEV_BROKERS: not set; required: host:port list (or set STREAM_BROKERS, which every cluster without its own falls back to)"},
			[]string{"cluster prod"}},
		{"fleet-wide problem named once, plainly", stream, []string{"STREAM_CLUSTERS", "prod,dev", "STREAM_TIMEOUT", "soon"},
			func(m *Member) { m.Duration("STREAM_TIMEOUT", time.Second, 0) },
			[]string{"(1 problem)", `STREAM_TIMEOUT="soon": invalid`}, []string{"cluster"}},
		{"secret never echoed", stream, []string{"STREAM_CLUSTERS", "prod", "STREAM_PROD_SASL_PASSWORD", "hunter2"},
			func(m *Member) {
				if m.Secret("STREAM_SASL_PASSWORD") != "" {
					m.FailSecret("STREAM_SASL_PASSWORD", m.Secret("STREAM_SASL_PASSWORD"), "at least 12 characters")
				}
			},
			[]string{"cluster prod: STREAM_PROD_SASL_PASSWORD: value rejected (hidden)"}, []string{"hunter2"}},
		{"a rule only the member meets", proxy, []string{"PROXY_INSTANCES", "lb1,lb2", "PROXY_LB1_RUNTIME_URL", "tcp://a:1"},
			func(m *Member) {
				if m.Lookup("PROXY_RUNTIME_URL") == "" {
					m.FailOwn("PROXY_RUNTIME_URL", "", "each instance needs its own runtime API address (or set "+m.Var("PROXY_RUNTIME_ENABLED")+"=false)")
				}
			},
			[]string{"instance lb2: PROXY_LB2_RUNTIME_URL: not set; each instance needs its own runtime API address (or set PROXY_LB2_RUNTIME_ENABLED=false)"},
			[]string{"instance lb1"}},
		{"without the list, problems as for one server", proxy, []string{"PROXY_RUNTIME_ENABLED", "maybe"},
			func(m *Member) {
				m.Bool("PROXY_RUNTIME_ENABLED", true)
				m.FailOwn("PROXY_STATS_URL", "", "a URL")
			},
			[]string{`PROXY_RUNTIME_ENABLED="maybe": invalid`, "  - PROXY_STATS_URL: not set; a URL"}, []string{"instance", "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(env(tc.env...))
			f := tc.m.Read(r)
			for _, n := range f.Names {
				m := f.Member(n)
				tc.read(m)
				m.Done()
			}
			err := r.Err()
			var ee *Error
			if !errors.As(err, &ee) {
				t.Fatalf("err %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error has %q:\n%v", w, err)
				}
			}
		})
	}
}

// One function resolves the instance or cluster argument, with one error
// text naming the configured members.
func TestSelect(t *testing.T) {
	pf := proxy.Read(New(env("PROXY_INSTANCES", "lb1,lb2,lb3")))
	sf := stream.Read(New(env("STREAM_CLUSTERS", "prod,dev")))
	one := stream.Read(New(env()))
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name  string
		f     *Fleet
		names []string
		want  []string
		err   string
	}{
		{"every instance by default", pf, nil, []string{"lb1", "lb2", "lb3"}, ""},
		{"all", pf, []string{"lb2", "all"}, []string{"lb1", "lb2", "lb3"}, ""},
		{"configured order, each once", pf, []string{"lb3", "lb1", "lb3"}, []string{"lb1", "lb3"}, ""},
		{"the first cluster by default", sf, nil, []string{"prod"}, ""},
		{"one cluster", sf, []string{"dev"}, []string{"dev"}, ""},
		{"the one default cluster", one, nil, []string{"default"}, ""},
		{"unknown instance", pf, []string{"lb1", "lb9"}, nil,
			`unknown instance "lb9": the configured instances are lb1, lb2, lb3 (PROXY_INSTANCES); omit instance or use "all" for every one`},
		{"unknown cluster (streammcp's words)", sf, []string{"qa"}, nil,
			`unknown cluster "qa": the configured clusters are prod, dev (STREAM_CLUSTERS); omit cluster for the default one, prod`},
		{"all is no cluster word", sf, []string{"all"}, nil, `unknown cluster "all"`},
		{"names are exact", sf, []string{"Prod"}, nil, `unknown cluster "Prod"`},
		{"a long name is cut", sf, []string{long}, nil, `"` + strings.Repeat("x", 64) + `"… (100 characters)`},
		{"control characters escaped", sf, []string{"a\nb"}, nil, `unknown cluster "a\nb"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f.Select(tc.names...)
			if tc.err != "" {
				var ue *UnknownMemberError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err) || got != nil {
					t.Fatalf("got %v, %v; want %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
