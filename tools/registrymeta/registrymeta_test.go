package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/mcpfleet/mcpfleet/tools/internal/serverhelp"
)

var update = flag.Bool("update", false, "rewrite each server.json from its --help=json")

const schemaSHA256 = "2e1e2dc758185bfc91023df4e5ace0e1c1bdb7b7b3d6614bb9ac6b9e9a9c2f68"

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	helpOnce sync.Map // server → *Help, built once per test binary
)

func help(t *testing.T, server string) *Help {
	t.Helper()
	if h, ok := helpOnce.Load(server); ok {
		return h.(*Help)
	}
	h, err := serverhelp.Read(root(t), server)
	if err != nil {
		t.Fatal(err)
	}
	helpOnce.Store(server, h)
	return h
}

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat = true
	b, err := os.ReadFile("testdata/server.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(SchemaURL, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return s.Validate(v)
}

// The vendored schema is the one its README names.
func TestSchemaPinned(t *testing.T) {
	b, err := os.ReadFile("testdata/server.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != schemaSHA256 {
		t.Fatalf("testdata/server.schema.json sha256 %x, pinned %s: a schema change is deliberate (see testdata/README.md)", sum, schemaSHA256)
	}
	if !bytes.Contains(b, []byte(`"$id": "`+SchemaURL+`"`)) {
		t.Fatalf("the vendored schema's $id is not %s", SchemaURL)
	}
}

// Each server.json is exactly what the generator makes from the server's
// --help=json today: a variable added, renamed or re-described in a table
// (the server's or shared's) fails here until -update rewrites the file.
func TestServerJSONUpToDate(t *testing.T) {
	for _, s := range Servers {
		t.Run(s, func(t *testing.T) {
			v, err := serverhelp.ReleasedVersion(root(t), s)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Document(help(t, s), s, v)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root(t), s, "server.json")
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (generate it: go test ./tools/registrymeta -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/server.json is stale against %s --help=json: run go test ./tools/registrymeta -update\n%s", s, s, firstDiff(got, want))
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  file:      %s\n  generated: %s", i+1, a, b)
		}
	}
	return ""
}

// Each committed server.json validates against the registry's schema, and
// carries what the issue asks for.
func TestServerJSONValid(t *testing.T) {
	sc := schema(t)
	for _, s := range Servers {
		t.Run(s, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root(t), s, "server.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(sc, b); err != nil {
				t.Fatalf("%s/server.json does not validate against %s:\n%v", s, SchemaURL, err)
			}
			var doc struct {
				Name, Description, Version, WebsiteURL string
				Packages                               []struct {
					RegistryType, Identifier string
					EnvironmentVariables     []struct{ Name string } `json:"environmentVariables"`
				}
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Name != Namespace+"/"+s || len(doc.Packages) != 1 || doc.Packages[0].RegistryType != "oci" ||
				doc.Packages[0].Identifier != ImageBase+"/"+s+":v"+doc.Version || !strings.Contains(string(b), "go install "+ModulePath+"/"+s+"@v"+doc.Version) {
				t.Errorf("unexpected identity: %+v", doc)
			}
			df, err := os.ReadFile(filepath.Join(root(t), s, "Dockerfile"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(df), `io.modelcontextprotocol.server.name="`+doc.Name+`"`) {
				t.Errorf("%s/Dockerfile lacks LABEL io.modelcontextprotocol.server.name=%q: the registry checks the image's label against the name", s, doc.Name)
			}
		})
	}
}

// The validator is not a rubber stamp: each hostile change to a real
// server.json must be refused by the vendored schema.
func TestSchemaRefusesBrokenDocuments(t *testing.T) {
	sc := schema(t)
	good, err := os.ReadFile(filepath.Join(root(t), "proxymcp", "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := func(d map[string]any) map[string]any { return d["packages"].([]any)[0].(map[string]any) }
	env0 := func(d map[string]any) map[string]any {
		return pkg(d)["environmentVariables"].([]any)[0].(map[string]any)
	}
	cases := []struct {
		name   string
		mutate func(d map[string]any)
	}{
		{"description over 100 characters", func(d map[string]any) { d["description"] = strings.Repeat("x", 101) }},
		{"empty description", func(d map[string]any) { d["description"] = "" }},
		{"name without a namespace", func(d map[string]any) { d["name"] = "proxymcp" }},
		{"name with two slashes", func(d map[string]any) { d["name"] = "io.github.mcpfleet/a/b" }},
		{"name with a space", func(d map[string]any) { d["name"] = "io.github.mcpfleet/proxy mcp" }},
		{"name with a unicode slash look-alike", func(d map[string]any) { d["name"] = "io.github.mcpfleet∕proxymcp" }},
		{"no version", func(d map[string]any) { delete(d, "version") }},
		{"version not a string", func(d map[string]any) { d["version"] = 1 }},
		{"package without registry type", func(d map[string]any) { delete(pkg(d), "registryType") }},
		{"image without identifier", func(d map[string]any) { delete(pkg(d), "identifier") }},
		{"package without transport", func(d map[string]any) { delete(pkg(d), "transport") }},
		{"unknown transport", func(d map[string]any) { pkg(d)["transport"] = map[string]any{"type": "carrier-pigeon"} }},
		{"variable without name", func(d map[string]any) { delete(env0(d), "name") }},
		{"isSecret as a string", func(d map[string]any) { env0(d)["isSecret"] = "true" }},
		{"isRequired as a number", func(d map[string]any) { env0(d)["isRequired"] = 1 }},
		{"unknown input format", func(d map[string]any) { env0(d)["format"] = "password" }},
		{"website not a URI", func(d map[string]any) { d["websiteUrl"] = "not a uri" }},
		{"repository without source", func(d map[string]any) { delete(d["repository"].(map[string]any), "source") }},
		{"title over 100 characters", func(d map[string]any) { d["title"] = strings.Repeat("t", 101) }},
	}
	if err := validate(sc, good); err != nil {
		t.Fatalf("the unmodified document must validate: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(good, &d); err != nil {
				t.Fatal(err)
			}
			c.mutate(d)
			b, _ := json.Marshal(d)
			if err := validate(sc, b); err == nil {
				t.Errorf("the schema accepted a document with %s", c.name)
			}
		})
	}
}

// The generator refuses what the schema would, before a file is written.
func TestDocumentRefusesLongSummary(t *testing.T) {
	h := &Help{Name: "x", Summary: strings.Repeat("é", 101), Variables: []Variable{{Name: "A"}}}
	if _, err := Document(h, "x", "1.0.0"); err == nil || !strings.Contains(err.Error(), "1 to 100") {
		t.Fatalf("err = %v", err)
	}
	h.Summary = ""
	if _, err := Document(h, "x", "1.0.0"); err == nil {
		t.Fatal("an empty summary was accepted")
	}
	h.Summary = strings.Repeat("é", 100) // 100 characters, 200 bytes: fits
	if _, err := Document(h, "x", "1.0.0"); err != nil {
		t.Fatal(err)
	}
}

// How a non-value default, booleans, required and secret variables land.
func TestDocumentVariables(t *testing.T) {
	h := &Help{Name: "x", Summary: "s", Variables: []Variable{
		{Name: "A_SCHEME", Default: "follows A_SSL", Description: "http or https"},
		{Name: "A_SSL", Default: "false", Description: "tls"},
		{Name: "A_PASSWORD", Description: "pw", Secret: true},
		{Name: "A_BROKERS", Description: "b", Required: true},
	}}
	b, err := Document(h, "x", "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Packages []struct {
			Env []map[string]any `json:"environmentVariables"`
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	env := d.Packages[0].Env
	want := []map[string]any{
		{"name": "A_SCHEME", "description": "http or https (default: follows A_SSL)"},
		{"name": "A_SSL", "description": "tls", "default": "false", "format": "boolean"},
		{"name": "A_PASSWORD", "description": "pw", "isSecret": true},
		{"name": "A_BROKERS", "description": "b", "isRequired": true},
	}
	for i := range want {
		if fmt.Sprint(env[i]) != fmt.Sprint(want[i]) {
			t.Errorf("variable %d = %v, want %v", i, env[i], want[i])
		}
	}
}

// readerMethods are envconfig.Reader's methods whose first argument names a
// variable, and the process-environment functions.
var readerMethods = map[string]bool{"String": true, "Secret": true, "Required": true, "Int": true, "Int64": true,
	"Bool": true, "Duration": true, "List": true, "Enum": true, "URL": true, "Lookup": true, "Getenv": true, "LookupEnv": true}

var varName = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

// notServerConfig are variables linked-in code reads that are not the
// server's configuration (so not for server.json), each with why.
var notServerConfig = map[string]string{
	"XDG_CONFIG_HOME": "the XDG base directory where sqlmcp finds its profile file; the user's desktop setting, not sqlmcp's",
	"XDG_STATE_HOME":  "the XDG base directory below which the default MCP_APPROVAL_LEDGER lies; the user's desktop setting, not the server's",
	"CODEX_HOME":      "the Codex CLI's own home directory, which codermcp reads only as the default of CODER_HOME (documented there)",
}

// taskVars are read by tasks.FromEnv, in shared/tasks, which every server
// links through the tool-call pipeline; only a server that offers tasks
// (calls tasks.FromEnv in its own module) reads them.
var taskVars = map[string]bool{"MCP_TASK_TTL": true, "MCP_MAX_TASKS": true, "MCP_TASK_HEARTBEAT": true, "MCP_TASK_MAX_RESULT_BYTES": true}

// offersTasks reports whether server's own module calls tasks.FromEnv.
func offersTasks(t *testing.T, server string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(filepath.Join(root(t), server), func(p string, d os.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		found = err == nil && bytes.Contains(b, []byte("tasks.FromEnv("))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// read is one variable read found in a server's linked code.
type read struct {
	name, how, where string
}

// reads lists, from the source of every package of this repository linked
// into the server binary (go list -deps), each call that reads a variable
// by a constant name: r.String("X", ...), r.Secret("X"), os.Getenv("X", ...).
func reads(t *testing.T, server string) []read {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \",\"}}", "./"+server)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./%s: %v", server, err)
	}
	var found []read
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || !strings.HasPrefix(f[0], ModulePath+"/") || f[2] == "" {
			continue
		}
		fset := token.NewFileSet()
		consts := map[string]string{}
		var files []*ast.File
		for _, name := range strings.Split(f[2], ",") {
			file, err := parser.ParseFile(fset, filepath.Join(f[1], name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, file)
			for _, d := range file.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
					for _, sp := range g.Specs {
						vs := sp.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								if l, ok := vs.Values[i].(*ast.BasicLit); ok && l.Kind == token.STRING {
									consts[n.Name], _ = strconv.Unquote(l.Value)
								}
							}
						}
					}
				}
			}
		}
		for _, file := range files {
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				var method string
				switch fn := call.Fun.(type) {
				case *ast.SelectorExpr:
					method = fn.Sel.Name
				case *ast.Ident:
					method = fn.Name
					if method == "getenv" {
						method = "Getenv"
					}
				}
				if !readerMethods[method] {
					return true
				}
				var name string
				switch a := call.Args[0].(type) {
				case *ast.BasicLit:
					if a.Kind == token.STRING {
						name, _ = strconv.Unquote(a.Value)
					}
				case *ast.Ident:
					name = consts[a.Name]
				}
				if varName.MatchString(name) {
					found = append(found, read{name, method, fset.Position(call.Pos()).String()})
				}
				return true
			})
		}
	}
	return found
}

// Every variable the server's code reads is in its server.json, secrets
// read with Reader.Secret are marked secret there, and the scan itself finds
// the reads it must (so an empty scan cannot pass).
func TestServerJSONListsEveryVariable(t *testing.T) {
	for _, s := range Servers {
		t.Run(s, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root(t), s, "server.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Packages []struct {
					Env []struct {
						Name     string
						IsSecret bool `json:"isSecret"`
					} `json:"environmentVariables"`
				}
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			listed := map[string]bool{}
			secret := map[string]bool{}
			for _, e := range doc.Packages[0].Env {
				listed[e.Name] = true
				secret[e.Name] = e.IsSecret
			}
			rs := reads(t, s)
			tasksOffered := offersTasks(t, s)
			var names []string
			for _, r := range rs {
				names = append(names, r.name)
				if why, ok := notServerConfig[r.name]; ok {
					t.Logf("%s read at %s is not server configuration: %s", r.name, r.where, why)
					continue
				}
				if taskVars[r.name] && !tasksOffered {
					t.Logf("%s read at %s: %s offers no tasks (never calls tasks.FromEnv)", r.name, r.where, s)
					continue
				}
				if !listed[r.name] {
					t.Errorf("%s reads %s (%s at %s) but server.json does not list it: add it to the variable table --help prints, then go test ./tools/registrymeta -update", s, r.name, r.how, r.where)
				}
				if r.how == "Secret" && !secret[r.name] {
					t.Errorf("%s reads %s as a secret (%s) but server.json does not mark it isSecret: set Secret: true in its envconfig.Var", s, r.name, r.where)
				}
			}
			for _, must := range []string{"MCP_TRANSPORT", "LOG_LEVEL", "JWT_SECRET"} {
				if !slices.Contains(names, must) {
					t.Errorf("the source scan found no read of %s: the scan is broken", must)
				}
			}
		})
	}
}
