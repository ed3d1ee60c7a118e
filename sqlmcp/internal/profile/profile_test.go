package profile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// env returns a getenv over m with XDG_CONFIG_HOME pointing at a fresh dir.
func env(t *testing.T, m map[string]string) (func(string) string, string) {
	t.Helper()
	dir := t.TempDir()
	if m == nil {
		m = map[string]string{}
	}
	m["XDG_CONFIG_HOME"] = dir
	return func(k string) string { return m[k] }, filepath.Join(dir, "sqlengine")
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestParseValidFiles(t *testing.T) {
	want := &File{
		Current: "dev",
		Profiles: map[string]Profile{
			"dev": {Host: "trino.dev.example", Port: 8443, User: "alice", Password: "s3cret", Catalog: "tpch", Schema: "tiny",
				SSL: &SSL{Enabled: ptr(true), Insecure: ptr(false)}},
			"default": {Host: "localhost"},
		},
		Output: &Output{Format: "csv"},
	}
	for _, name := range []string{"full.json", "full.yaml"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(name, data, strings.HasSuffix(name, ".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		name    string
		yaml    bool
		content string
		want    string
	}{
		{"unknown top field", false, "{\n  \"curent\": \"x\"\n}", `config.json line 2: field "curent": unknown field; known fields here: current, profiles, output`},
		{"unknown profile field", false, "{\"profiles\": {\n \"dev\": {\n  \"host\": \"h\",\n  \"hots\": \"x\"}}}", `line 4: field "profiles.dev.hots": unknown field`},
		{"unknown ssl field", true, "profiles:\n  dev:\n    ssl:\n      verify: false\n", `config.yaml line 4: field "profiles.dev.ssl.verify": unknown field; known fields here: enabled, insecure`},
		{"port as string", false, "{\"profiles\": {\"dev\": {\n\"port\": \"8080\"}}}", `line 2: field "profiles.dev.port": must be a port number from 1 to 65535; found the string "8080"`},
		{"port out of range", true, "profiles:\n  dev:\n    port: 70000\n", `line 3: field "profiles.dev.port": must be a port number`},
		{"ssl not bool", true, "profiles:\n  dev:\n    ssl:\n      enabled: \"yes\"\n", `line 4: field "profiles.dev.ssl.enabled": must be true or false`},
		{"bad output format", false, "{\"output\": {\"format\": \"xml\"}}", `field "output.format": "xml" is not an output format; use one of table, json, csv`},
		{"current not string", false, "{\"current\": 3}", `field "current": must be a string (quote it); found the number 3`},
		{"malformed json", false, "{\n  \"current\": \"dev\",\n  \"profiles\": {,}\n}", `config.json line 3: malformed JSON: invalid character ','`},
		{"truncated json", false, "{\n  \"current\": \"dev\"", `malformed JSON: unexpected end of file`},
		{"duplicate key", false, "{\"current\": \"a\",\n\"current\": \"b\"}", `line 2: field "current": duplicate key`},
		{"malformed yaml", true, "profiles:\n  dev:\n    host: [a\n", `config.yaml line`},
		{"top-level list", true, "- a\n- b\n", `the top level must be an object`},
		{"profile not object", false, "{\"profiles\": {\"dev\": \"h\"}}", `field "profiles.dev": a profile must be an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/cfg/config.json"
			if tt.yaml {
				path = "/cfg/config.yaml"
			}
			_, err := Parse(path, []byte(tt.content), tt.yaml)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("want *FileError, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "configuration file "+path) {
				t.Fatalf("error %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadLocations(t *testing.T) {
	t.Run("json wins over yaml", func(t *testing.T) {
		getenv, dir := env(t, nil)
		write(t, dir, "config.yaml", "current: fromyaml\nprofiles: {fromyaml: {}}\n")
		write(t, dir, "config.json", `{"current": "fromjson", "profiles": {"fromjson": {}}}`)
		cfg, err := Load(getenv)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.File.Current != "fromjson" || cfg.YAML || cfg.Path != filepath.Join(dir, "config.json") {
			t.Fatalf("got %+v", cfg)
		}
	})
	t.Run("yaml alone", func(t *testing.T) {
		getenv, dir := env(t, nil)
		write(t, dir, "config.yaml", "current: y\nprofiles: {y: {}}\n")
		cfg, err := Load(getenv)
		if err != nil || cfg.File.Current != "y" || !cfg.YAML {
			t.Fatalf("got %+v, %v", cfg, err)
		}
	})
	t.Run("home without XDG", func(t *testing.T) {
		home := t.TempDir()
		getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
		write(t, filepath.Join(home, ".config", "sqlengine"), "config.json", `{"current": "h", "profiles": {"h": {}}}`)
		cfg, err := Load(getenv)
		if err != nil || cfg.File.Current != "h" {
			t.Fatalf("got %+v, %v", cfg, err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		getenv, dir := env(t, nil)
		cfg, err := Load(getenv)
		if err != nil || cfg.Exists || cfg.Path != filepath.Join(dir, "config.json") {
			t.Fatalf("got %+v, %v", cfg, err)
		}
	})
}

func TestSaveNewFileIsJSON0600(t *testing.T) {
	getenv, dir := env(t, nil)
	cfg, err := Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.File.Profiles = map[string]Profile{"dev": {Host: "h", Port: 9090, SSL: &SSL{Enabled: ptr(true)}}}
	cfg.File.Current = "dev"
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
	again, err := Load(getenv)
	if err != nil || !reflect.DeepEqual(again.File, cfg.File) {
		t.Fatalf("round trip: %+v, %v", again, err)
	}
}

func TestSaveKeepsYAMLAndItsComments(t *testing.T) {
	getenv, dir := env(t, nil)
	write(t, dir, "config.yaml", "# my connections\nprofiles:\n  a:\n    host: h # the laptop\n  b:\n    host: gone\n")
	cfg, err := Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.File.Current = "a"
	delete(cfg.File.Profiles, "b")
	cfg.File.Profiles["c"] = Profile{Host: "new", Port: 9000, SSL: &SSL{Enabled: ptr(true)}}
	cfg.File.Output = &Output{Format: "json"}
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		t.Fatal("a JSON file was created next to the YAML one")
	}
	data, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	for _, want := range []string{"# my connections", "host: h # the laptop", "current: a"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("saved YAML lacks %q:\n%s", want, data)
		}
	}
	again, err := Load(getenv)
	if err != nil || again.File.Current != "a" || again.File.Profiles["a"].Host != "h" || again.File.Profiles["c"].Port != 9000 ||
		again.File.Profiles["b"].Host != "" || again.OutputFormat() != "json" || !*again.File.Profiles["c"].SSL.Enabled {
		t.Fatalf("got %+v, %v\n%s", again.File, err, data)
	}
}

// One test per precedence rung, highest first.
func TestResolvePrecedence(t *testing.T) {
	file := `{"current": "cur", "profiles": {
		"flagp": {"host": "flagp-host"},
		"envp": {"host": "envp-host"},
		"cur": {"host": "cur-host"},
		"default": {"host": "default-host", "port": 1111}
	}}`
	envAll := map[string]string{EnvProfile: "envp", EnvHost: "env-host"}
	tests := []struct {
		name      string
		file      string
		env       map[string]string
		flags     Flags
		wantHost  string
		wantSrc   string
		wantProf  string
		wantFromP string
	}{
		{"1 flag", file, envAll, Flags{Profile: "flagp", Host: ptr("flag-host")}, "flag-host", "--host", "flagp", FromFlag},
		{"2 --profile", file, envAll, Flags{Profile: "flagp"}, "flagp-host", `profile "flagp"`, "flagp", FromFlag},
		{"3 SQLENGINE_PROFILE", file, envAll, Flags{}, "envp-host", `profile "envp"`, "envp", FromEnv},
		{"4 current", file, map[string]string{EnvHost: "env-host"}, Flags{}, "cur-host", `profile "cur"`, "cur", FromCurrent},
		{"5 default profile", `{"profiles": {"default": {"host": "default-host"}, "other": {"host": "o"}}}`, map[string]string{EnvHost: "env-host"}, Flags{}, "default-host", `profile "default"`, "default", FromDefault},
		{"6 environment", `{"profiles": {"other": {"host": "o"}}}`, map[string]string{EnvHost: "env-host"}, Flags{}, "env-host", EnvHost, "", ""},
		{"7 built-in default", "", nil, Flags{}, "localhost", "default", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv, dir := env(t, tt.env)
			if tt.file != "" {
				write(t, dir, "config.json", tt.file)
			}
			c, err := Resolve(getenv, tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			if c.Host != tt.wantHost || c.Sources["host"] != tt.wantSrc || c.Profile != tt.wantProf || c.ProfileFrom != tt.wantFromP {
				t.Fatalf("got host %q from %q, profile %q from %q", c.Host, c.Sources["host"], c.Profile, c.ProfileFrom)
			}
		})
	}
}

func TestResolveMergesFieldByField(t *testing.T) {
	getenv, dir := env(t, map[string]string{EnvPort: "9999", EnvUser: "envuser", EnvPassword: " pw with spaces ", EnvSSL: "true", EnvSSLInsecure: "yes", EnvCatalog: "envcat"})
	write(t, dir, "config.json", `{"current": "p", "profiles": {"p": {"host": "h", "catalog": "pcat", "ssl": {"insecure": false}}}}`)
	c, err := Resolve(getenv, Flags{Schema: ptr("flagschema")})
	if err != nil {
		t.Fatal(err)
	}
	want := Connection{Host: "h", Port: 9999, User: "envuser", Password: " pw with spaces ", Catalog: "pcat", Schema: "flagschema", SSL: true, Insecure: false}
	c2 := c
	c2.Sources, c2.Profile, c2.ProfileFrom, c2.ConfigPath = nil, "", "", ""
	if !reflect.DeepEqual(c2, want) {
		t.Fatalf("got %+v\nwant %+v", c2, want)
	}
	if c.Sources["insecure"] != `profile "p"` || c.Sources["password"] != EnvPassword || c.Sources["port"] != EnvPort {
		t.Fatalf("sources %v", c.Sources)
	}
}

func TestResolveDefaults(t *testing.T) {
	getenv, _ := env(t, nil)
	c, err := Resolve(getenv, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "localhost" || c.Port != 8080 || c.User != "sqlmcp" || c.SSL || c.Insecure || c.Password != "" {
		t.Fatalf("got %+v", c)
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   map[string]string
		flags Flags
		check func(error) bool
		want  string
	}{
		{"--profile missing", `{"profiles": {"a": {}}}`, nil, Flags{Profile: "nope"}, func(e error) bool { var n *NotFoundError; return errors.As(e, &n) && n.From == FromFlag },
			`use profile "nope" named by --profile: no such profile in `},
		{"env profile missing", "", map[string]string{EnvProfile: "nope"}, Flags{}, func(e error) bool { var n *NotFoundError; return errors.As(e, &n) && n.From == FromEnv },
			"named by SQLENGINE_PROFILE"},
		{"current missing", `{"current": "gone", "profiles": {"a": {}}}`, nil, Flags{}, func(e error) bool { var n *NotFoundError; return errors.As(e, &n) && n.From == FromCurrent },
			`defined profiles: a`},
		{"bad port env", "", map[string]string{EnvPort: "eighty"}, Flags{}, func(e error) bool { var n *EnvError; return errors.As(e, &n) },
			`read SQLENGINE_PORT="eighty": invalid value; accepted: a port number from 1 to 65535`},
		{"bad ssl env", "", map[string]string{EnvSSL: "maybe"}, Flags{}, func(e error) bool { var n *EnvError; return errors.As(e, &n) },
			`SQLENGINE_SSL="maybe"`},
		{"bad file", `{"profiles": {"a": {"hots": "x"}}}`, nil, Flags{}, func(e error) bool { var n *FileError; return errors.As(e, &n) },
			`field "profiles.a.hots": unknown field`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv, dir := env(t, tt.env)
			if tt.file != "" {
				write(t, dir, "config.json", tt.file)
			}
			_, err := Resolve(getenv, tt.flags)
			if err == nil || !tt.check(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestBadPortEnvIgnoredWhenOverridden(t *testing.T) {
	getenv, _ := env(t, map[string]string{EnvPort: "x"})
	c, err := Resolve(getenv, Flags{Port: ptr(1234)})
	if err != nil || c.Port != 1234 {
		t.Fatalf("got %+v, %v", c, err)
	}
}
