// Package profile reads and writes the sqlengine connection-profile file and
// resolves the connection settings that both sqlmcp modes (MCP server and
// command-line client) use, with one precedence order:
//
//  1. command-line flags (--host, --port, --user, --catalog, --schema, --ssl, --insecure)
//  2. the profile named by --profile
//  3. the profile named by SQLENGINE_PROFILE
//  4. the profile named by the file's "current"
//  5. a profile named "default"
//  6. the SQLENGINE_* environment variables, then built-in defaults
//
// Rungs 2 to 5 choose one profile (the first that names one); its fields
// override the environment field by field, and flags override both.
//
// The file is $XDG_CONFIG_HOME/sqlengine/config.json or config.yaml (else
// ~/.config/sqlengine/...). When both exist the JSON file wins. Parsing is
// strict: an unknown field, a wrongly typed value or malformed syntax is an
// error naming the file, the line and the field. The file is only written by
// explicit commands (config profile add|remove|use); a new file is JSON with
// mode 0600.
package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Output formats accepted in output.format and by the CLI's --format.
var Formats = []string{"table", "json", "csv"}

// SSL holds a profile's TLS settings. Nil fields are unset.
type SSL struct {
	Enabled  *bool `json:"enabled,omitempty" yaml:"enabled,omitempty"`
	Insecure *bool `json:"insecure,omitempty" yaml:"insecure,omitempty"`
}

// Profile is one named set of connection settings. Zero values are unset and
// fall through to the environment.
type Profile struct {
	Host     string `json:"host,omitempty" yaml:"host,omitempty"`
	Port     int    `json:"port,omitempty" yaml:"port,omitempty"`
	User     string `json:"user,omitempty" yaml:"user,omitempty"`
	Password string `json:"password,omitempty" yaml:"password,omitempty"`
	Catalog  string `json:"catalog,omitempty" yaml:"catalog,omitempty"`
	Schema   string `json:"schema,omitempty" yaml:"schema,omitempty"`
	SSL      *SSL   `json:"ssl,omitempty" yaml:"ssl,omitempty"`
	// Auth is how the shell authenticates to Trino: password (default),
	// jwt (with JWTFile) or external (Trino's browser login).
	Auth    string `json:"auth,omitempty" yaml:"auth,omitempty"`
	JWTFile string `json:"jwt_file,omitempty" yaml:"jwt_file,omitempty"`
}

// Output holds display preferences of the command-line client.
type Output struct {
	Format string `json:"format,omitempty" yaml:"format,omitempty"`
}

// File is the content of the configuration file.
type File struct {
	Current  string             `json:"current,omitempty" yaml:"current,omitempty"`
	Profiles map[string]Profile `json:"profiles,omitempty" yaml:"profiles,omitempty"`
	Output   *Output            `json:"output,omitempty" yaml:"output,omitempty"`
}

// Config is a loaded (or absent) configuration file.
type Config struct {
	Path   string // the file read, or the file a save would create
	Exists bool   // whether Path existed when loaded
	YAML   bool   // the file is YAML (else JSON)
	File   File
	mode   fs.FileMode
	raw    []byte // the YAML file as read, to keep its comments on save
}

// Mode returns the file's permission bits (0 when it does not exist).
func (c *Config) Mode() fs.FileMode { return c.mode }

// OutputFormat returns output.format, or "" when unset.
func (c *Config) OutputFormat() string {
	if c == nil || c.File.Output == nil {
		return ""
	}
	return c.File.Output.Format
}

// Names returns the profile names in sorted order.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.File.Profiles))
	for n := range c.File.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Dir returns the sqlengine configuration directory: $XDG_CONFIG_HOME/sqlengine
// when XDG_CONFIG_HOME is an absolute path, else $HOME/.config/sqlengine.
func Dir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "sqlengine"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", fmt.Errorf("find the configuration directory: neither XDG_CONFIG_HOME nor HOME is set; set one of them")
	}
	return filepath.Join(home, ".config", "sqlengine"), nil
}

// FileError is a problem in the configuration file.
type FileError struct {
	Path  string // the file
	Line  int    // 1-based line, 0 when unknown
	Field string // dotted field path, "" when not about one field
	Msg   string // what is wrong and what would be accepted
}

func (e *FileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "configuration file %s", e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Load finds and parses the configuration file. A missing file is not an
// error: the Config is empty, Exists is false and Path is where a new JSON
// file would be written.
//
// Without XDG_CONFIG_HOME and HOME there is no configuration directory: the
// Config is empty with an empty Path (a container without a home still
// runs from the environment), and Save fails.
func Load(getenv func(string) string) (*Config, error) {
	dir, err := Dir(getenv)
	if err != nil {
		return &Config{}, nil
	}
	jsonPath := filepath.Join(dir, "config.json")
	for _, c := range []struct {
		path string
		yaml bool
	}{{jsonPath, false}, {filepath.Join(dir, "config.yaml"), true}, {filepath.Join(dir, "config.yml"), true}} {
		data, err := os.ReadFile(c.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read configuration file %s: %w; check its permissions", c.path, err)
		}
		st, err := os.Stat(c.path)
		if err != nil {
			return nil, fmt.Errorf("read configuration file %s: %w", c.path, err)
		}
		f, err := Parse(c.path, data, c.yaml)
		if err != nil {
			return nil, err
		}
		cfg := &Config{Path: c.path, Exists: true, YAML: c.yaml, File: *f, mode: st.Mode().Perm()}
		if c.yaml {
			cfg.raw = data
		}
		return cfg, nil
	}
	return &Config{Path: jsonPath}, nil
}

// Parse decodes and validates a configuration file's content strictly. path is
// only used in error messages.
func Parse(path string, data []byte, isYAML bool) (*File, error) {
	var root *tree
	var err error
	if isYAML {
		root, err = parseYAML(data)
	} else {
		root, err = parseJSON(data)
	}
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Path = path
			return nil, fe
		}
		return nil, &FileError{Path: path, Msg: err.Error()}
	}
	f, err := decodeFile(root)
	if err != nil {
		err.(*FileError).Path = path
		return nil, err
	}
	return f, nil
}

// tree is a parsed document of either syntax, with line numbers.
type tree struct {
	kind  treeKind
	line  int
	keys  []string // object keys in document order
	kline []int    // line of each key
	vals  []*tree
	items []*tree // array items
	str   string  // scalar text
	tag   string  // scalar kind: string, number, bool, null
}

type treeKind int

const (
	treeScalar treeKind = iota
	treeObject
	treeArray
)

func (t *tree) describe() string {
	switch t.kind {
	case treeObject:
		return "an object"
	case treeArray:
		return "a list"
	}
	switch t.tag {
	case "null":
		return "null"
	case "string":
		return fmt.Sprintf("the string %q", t.str)
	}
	return fmt.Sprintf("the %s %s", t.tag, t.str)
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func parseJSON(data []byte) (*tree, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &tree{kind: treeObject, line: 1}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	syntaxErr := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &FileError{Line: lineAt(data, se.Offset), Msg: "malformed JSON: " + se.Error() + "; fix the syntax"}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &FileError{Line: lineAt(data, int64(len(data))), Msg: "malformed JSON: unexpected end of file; fix the syntax"}
		}
		return &FileError{Msg: "malformed JSON: " + err.Error() + "; fix the syntax"}
	}
	var value func() (*tree, error)
	value = func() (*tree, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxErr(err)
		}
		line := lineAt(data, dec.InputOffset())
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				t := &tree{kind: treeObject, line: line}
				for dec.More() {
					kt, err := dec.Token()
					if err != nil {
						return nil, syntaxErr(err)
					}
					k, _ := kt.(string)
					kl := lineAt(data, dec.InputOffset())
					if slices.Contains(t.keys, k) {
						return nil, &FileError{Line: kl, Field: k, Msg: "duplicate key; keep one"}
					}
					val, err := value()
					if err != nil {
						return nil, err
					}
					t.keys, t.kline, t.vals = append(t.keys, k), append(t.kline, kl), append(t.vals, val)
				}
				if _, err := dec.Token(); err != nil {
					return nil, syntaxErr(err)
				}
				return t, nil
			case '[':
				t := &tree{kind: treeArray, line: line}
				for dec.More() {
					it, err := value()
					if err != nil {
						return nil, err
					}
					t.items = append(t.items, it)
				}
				if _, err := dec.Token(); err != nil {
					return nil, syntaxErr(err)
				}
				return t, nil
			}
			return nil, &FileError{Line: line, Msg: fmt.Sprintf("malformed JSON: unexpected %q; fix the syntax", v)}
		case string:
			return &tree{line: line, str: v, tag: "string"}, nil
		case json.Number:
			return &tree{line: line, str: v.String(), tag: "number"}, nil
		case bool:
			return &tree{line: line, str: strconv.FormatBool(v), tag: "bool"}, nil
		default:
			return &tree{line: line, tag: "null"}, nil
		}
	}
	root, err := value()
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &FileError{Line: lineAt(data, dec.InputOffset()), Msg: "malformed JSON: unexpected content after the top-level object; fix the syntax"}
	}
	return root, nil
}

func parseYAML(data []byte) (*tree, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3 messages already carry "line N"; keep them as they are.
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
			msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		}
		return nil, &FileError{Line: line, Msg: "malformed YAML: " + msg + "; fix the syntax"}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &tree{kind: treeObject, line: 1}, nil
	}
	var conv func(n *yaml.Node) (*tree, error)
	conv = func(n *yaml.Node) (*tree, error) {
		switch n.Kind {
		case yaml.AliasNode:
			return conv(n.Alias)
		case yaml.MappingNode:
			t := &tree{kind: treeObject, line: n.Line}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Tag == "!!merge" {
					return nil, &FileError{Line: k.Line, Field: k.Value, Msg: "YAML merge keys are not supported; write the fields out"}
				}
				v, err := conv(n.Content[i+1])
				if err != nil {
					return nil, err
				}
				t.keys, t.kline, t.vals = append(t.keys, k.Value), append(t.kline, k.Line), append(t.vals, v)
			}
			return t, nil
		case yaml.SequenceNode:
			t := &tree{kind: treeArray, line: n.Line}
			for _, c := range n.Content {
				it, err := conv(c)
				if err != nil {
					return nil, err
				}
				t.items = append(t.items, it)
			}
			return t, nil
		default:
			t := &tree{line: n.Line, str: n.Value}
			switch n.ShortTag() {
			case "!!int", "!!float":
				t.tag = "number"
			case "!!bool":
				t.tag = "bool"
				t.str = strings.ToLower(n.Value)
			case "!!null":
				t.tag = "null"
			default:
				t.tag = "string"
			}
			return t, nil
		}
	}
	return conv(doc.Content[0])
}

// decodeFile validates the tree against the file's schema.
func decodeFile(root *tree) (*File, error) {
	if root.kind != treeObject {
		return nil, &FileError{Line: root.line, Msg: "the top level must be an object with current, profiles and output; found " + root.describe()}
	}
	f := &File{}
	err := fields(root, "", []string{"current", "profiles", "output"}, func(key string, line int, v *tree) error {
		switch key {
		case "current":
			s, err := str(v, "current", line)
			if err != nil {
				return err
			}
			f.Current = s
		case "profiles":
			if v.kind != treeObject {
				return &FileError{Line: line, Field: "profiles", Msg: "must be an object of profile name to settings; found " + v.describe()}
			}
			f.Profiles = map[string]Profile{}
			for i, name := range v.keys {
				if name == "" {
					return &FileError{Line: v.kline[i], Field: "profiles", Msg: "a profile name is empty; name it"}
				}
				p, err := decodeProfile(v.vals[i], "profiles."+name, v.kline[i])
				if err != nil {
					return err
				}
				f.Profiles[name] = p
			}
		case "output":
			f.Output = &Output{}
			return fields(v, "output", []string{"format"}, func(_ string, line int, v *tree) error {
				s, err := str(v, "output.format", line)
				if err != nil {
					return err
				}
				if !slices.Contains(Formats, s) {
					return &FileError{Line: line, Field: "output.format", Msg: fmt.Sprintf("%q is not an output format; use one of %s", s, strings.Join(Formats, ", "))}
				}
				f.Output.Format = s
				return nil
			})
		}
		return nil
	})
	return f, err
}

func decodeProfile(t *tree, path string, line int) (Profile, error) {
	var p Profile
	if t.kind != treeObject {
		return p, &FileError{Line: line, Field: path, Msg: "a profile must be an object of settings; found " + t.describe()}
	}
	err := fields(t, path, []string{"host", "port", "user", "password", "catalog", "schema", "ssl", "auth", "jwt_file"}, func(key string, line int, v *tree) error {
		field := path + "." + key
		var err error
		switch key {
		case "host":
			p.Host, err = str(v, field, line)
		case "user":
			p.User, err = str(v, field, line)
		case "password":
			p.Password, err = str(v, field, line)
		case "catalog":
			p.Catalog, err = str(v, field, line)
		case "auth":
			if p.Auth, err = str(v, field, line); err == nil && p.Auth != "password" && p.Auth != "jwt" && p.Auth != "external" {
				return &FileError{Line: line, Field: field, Msg: "must be password, jwt or external; found " + v.describe()}
			}
		case "jwt_file":
			p.JWTFile, err = str(v, field, line)
		case "schema":
			p.Schema, err = str(v, field, line)
		case "port":
			n, perr := strconv.Atoi(v.str)
			if v.kind != treeScalar || v.tag != "number" || perr != nil || n < 1 || n > 65535 {
				return &FileError{Line: line, Field: field, Msg: "must be a port number from 1 to 65535; found " + v.describe()}
			}
			p.Port = n
		case "ssl":
			p.SSL = &SSL{}
			return fields(v, field, []string{"enabled", "insecure"}, func(key string, line int, v *tree) error {
				if v.kind != treeScalar || v.tag != "bool" {
					return &FileError{Line: line, Field: field + "." + key, Msg: "must be true or false; found " + v.describe()}
				}
				b := v.str == "true"
				if key == "enabled" {
					p.SSL.Enabled = &b
				} else {
					p.SSL.Insecure = &b
				}
				return nil
			})
		}
		return err
	})
	return p, err
}

// fields walks an object, refusing keys outside known.
func fields(t *tree, path string, known []string, each func(key string, line int, v *tree) error) error {
	if t.kind != treeObject {
		return &FileError{Line: t.line, Field: path, Msg: "must be an object; found " + t.describe()}
	}
	for i, k := range t.keys {
		field := k
		if path != "" {
			field = path + "." + k
		}
		if !slices.Contains(known, k) {
			return &FileError{Line: t.kline[i], Field: field, Msg: "unknown field; known fields here: " + strings.Join(known, ", ")}
		}
		if err := each(k, t.kline[i], t.vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func str(v *tree, field string, line int) (string, error) {
	// Strict even for YAML: an unquoted 12345 is a number; the message says to quote it.
	if v.kind != treeScalar || v.tag != "string" {
		return "", &FileError{Line: line, Field: field, Msg: "must be a string (quote it); found " + v.describe()}
	}
	return v.str, nil
}

// Save writes the configuration to c.Path atomically (temporary file and
// rename), creating the directory with mode 0700. A new file gets mode 0600;
// an existing file keeps its mode. YAML files stay YAML, with the comments
// and layout of everything that did not change; everything else is JSON.
func (c *Config) Save() error {
	if c.Path == "" {
		return errors.New("write the configuration file: there is no configuration directory; set XDG_CONFIG_HOME or HOME")
	}
	var data []byte
	var err error
	if c.YAML {
		data, err = c.yamlBytes()
	} else {
		data, err = json.MarshalIndent(&c.File, "", "  ")
		data = append(data, '\n')
	}
	if err != nil {
		return fmt.Errorf("encode configuration: %w", err)
	}
	dir := filepath.Dir(c.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create configuration directory %s: %w; check its permissions", dir, err)
	}
	mode := c.mode
	if !c.Exists || mode == 0 {
		mode = 0o600
	}
	tmp, err := os.CreateTemp(dir, ".config-*.tmp")
	if err != nil {
		return fmt.Errorf("write configuration file %s: %w; check the directory's permissions", c.Path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write configuration file %s: %w", c.Path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write configuration file %s: %w", c.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write configuration file %s: %w", c.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write configuration file %s: %w", c.Path, err)
	}
	if err := os.Rename(tmp.Name(), c.Path); err != nil {
		return fmt.Errorf("write configuration file %s: %w", c.Path, err)
	}
	c.Exists, c.mode = true, mode
	return nil
}

// ValidName reports whether name can be used for a new profile: letters,
// digits, '-', '_' and '.', at most 64 characters.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Masked returns p with the password replaced by asterisks when set, for display.
func (p Profile) Masked() Profile {
	if p.Password != "" {
		p.Password = "********"
	}
	return p
}

// yamlBytes renders the file as YAML, editing the document that was read so
// that comments and unchanged entries stay as the user wrote them.
func (c *Config) yamlBytes() ([]byte, error) {
	var doc yaml.Node
	if len(c.raw) > 0 {
		if err := yaml.Unmarshal(c.raw, &doc); err != nil {
			return nil, err
		}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return yaml.Marshal(&c.File)
	}
	root := doc.Content[0]
	setKey(root, "current", scalarNode(c.File.Current), c.File.Current == "")
	profiles := getKey(root, "profiles")
	if len(c.File.Profiles) == 0 {
		setKey(root, "profiles", nil, true)
	} else {
		if profiles == nil || profiles.Kind != yaml.MappingNode {
			profiles = &yaml.Node{Kind: yaml.MappingNode}
			setKey(root, "profiles", profiles, false)
		}
		for i := 0; i+1 < len(profiles.Content); {
			if _, ok := c.File.Profiles[profiles.Content[i].Value]; !ok {
				profiles.Content = append(profiles.Content[:i], profiles.Content[i+2:]...)
				continue
			}
			i += 2
		}
		for _, name := range c.Names() {
			want := c.File.Profiles[name]
			if old := getKey(profiles, name); old != nil {
				if p, err := decodeProfileNode(old); err == nil && profilesEqual(p, want) {
					continue // unchanged: keep the user's formatting
				}
			}
			var n yaml.Node
			if err := n.Encode(want); err != nil {
				return nil, err
			}
			setKey(profiles, name, &n, false)
		}
	}
	format := c.OutputFormat()
	if format == "" {
		setKey(root, "output", nil, true)
	} else if out := getKey(root, "output"); out == nil || out.Kind != yaml.MappingNode {
		setKey(root, "output", &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalarNode("format"), scalarNode(format)}}, false)
	} else {
		setKey(out, "format", scalarNode(format), false)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func scalarNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

func getKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey replaces (or appends) key's value in mapping m, or deletes it.
func setKey(m *yaml.Node, key string, v *yaml.Node, del bool) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if del {
				m.Content = append(m.Content[:i], m.Content[i+2:]...)
			} else {
				// Keep comments attached to the old value.
				v.HeadComment, v.LineComment, v.FootComment = m.Content[i+1].HeadComment, m.Content[i+1].LineComment, m.Content[i+1].FootComment
				m.Content[i+1] = v
			}
			return
		}
	}
	if !del {
		m.Content = append(m.Content, scalarNode(key), v)
	}
}

func decodeProfileNode(n *yaml.Node) (Profile, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(n); err != nil {
		return Profile{}, err
	}
	enc.Close()
	root, err := parseYAML(b.Bytes())
	if err != nil {
		return Profile{}, err
	}
	return decodeProfile(root, "profile", 0)
}

func profilesEqual(a, b Profile) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
