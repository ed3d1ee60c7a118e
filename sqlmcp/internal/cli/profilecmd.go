package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/profile"
)

func runProfileList(a *app, _ []string) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	cols := []Column{{"name", "varchar"}, {"current", "boolean"}, {"host", "varchar"}, {"port", "integer"},
		{"user", "varchar"}, {"catalog", "varchar"}, {"schema", "varchar"}, {"ssl", "boolean"}}
	var rows [][]any
	for _, name := range cfg.Names() {
		p := cfg.File.Profiles[name]
		var ssl any
		if p.SSL != nil && p.SSL.Enabled != nil {
			ssl = *p.SSL.Enabled
		}
		rows = append(rows, []any{name, name == cfg.File.Current, orNull(p.Host), portOrNull(p.Port), orNull(p.User), orNull(p.Catalog), orNull(p.Schema), ssl})
	}
	return printRows(a.format(), a.stdout, cols, rows, 0)
}

// orNull shows an unset profile field as NULL (it comes from elsewhere).
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func portOrNull(p int) any {
	if p == 0 {
		return nil
	}
	return int64(p)
}

func boolOrNull(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func runProfileUse(a *app, args []string) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	name := args[0]
	if _, ok := cfg.File.Profiles[name]; !ok {
		return &profile.NotFoundError{Name: name, From: profile.FromArgument, Path: cfg.Path, Available: cfg.Names()}
	}
	cfg.File.Current = name
	if err := cfg.Save(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Current profile is now %q (%s).\n", name, cfg.Path)
	return nil
}

func runProfileShow(a *app, args []string) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	cols := []Column{{"setting", "varchar"}, {"value", "varchar"}}
	if len(args) == 1 {
		name := args[0]
		p, ok := cfg.File.Profiles[name]
		if !ok {
			return &profile.NotFoundError{Name: name, From: profile.FromArgument, Path: cfg.Path, Available: cfg.Names()}
		}
		p = p.Masked()
		var ssl profile.SSL
		if p.SSL != nil {
			ssl = *p.SSL
		}
		rows := [][]any{
			{"name", name}, {"host", orNull(p.Host)}, {"port", portOrNull(p.Port)}, {"user", orNull(p.User)},
			{"password", orNull(p.Password)}, {"catalog", orNull(p.Catalog)}, {"schema", orNull(p.Schema)},
			{"ssl.enabled", boolOrNull(ssl.Enabled)}, {"ssl.insecure", boolOrNull(ssl.Insecure)},
		}
		return printRows(a.format(), a.stdout, cols, rows, 0)
	}
	// No name: the connection this command line resolves to, with sources.
	c, err := profile.ResolveWith(cfg, a.getenv, a.opts.conn)
	if err != nil {
		return err
	}
	password := any(nil)
	if c.Password != "" {
		password = "********"
	}
	prof := any(nil)
	if c.Profile != "" {
		prof = fmt.Sprintf("%s (from %s)", c.Profile, c.ProfileFrom)
	}
	cols = append(cols, Column{"source", "varchar"})
	rows := [][]any{
		{"profile", prof, cfg.Path},
		{"host", c.Host, c.Sources["host"]}, {"port", int64(c.Port), c.Sources["port"]}, {"user", c.User, c.Sources["user"]},
		{"password", password, c.Sources["password"]}, {"catalog", orNull(c.Catalog), c.Sources["catalog"]},
		{"schema", orNull(c.Schema), c.Sources["schema"]}, {"ssl", c.SSL, c.Sources["ssl"]}, {"insecure", c.Insecure, c.Sources["insecure"]},
	}
	return printRows(a.format(), a.stdout, cols, rows, 0)
}

func runProfileAdd(a *app, args []string) error {
	name := args[0]
	if !profile.ValidName(name) {
		return usagef("config profile add", "profile name %q is not valid; use letters, digits, '-', '_' and '.' (at most 64)", name)
	}
	if a.opts.conn.Profile != "" {
		return usagef("config profile add", "--profile does not apply to add; the new profile's name is the argument")
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	if _, exists := cfg.File.Profiles[name]; exists && !a.opts.replace {
		return fmt.Errorf("add profile %q: it already exists in %s; pass --replace to overwrite it, or remove it first", name, cfg.Path)
	}
	f := a.opts.conn
	p := profile.Profile{}
	if f.Host != nil {
		p.Host = *f.Host
	}
	if f.Port != nil {
		p.Port = *f.Port
	}
	if f.User != nil {
		p.User = *f.User
	}
	if f.Catalog != nil {
		p.Catalog = *f.Catalog
	}
	if f.Schema != nil {
		p.Schema = *f.Schema
	}
	if f.SSL != nil || f.Insecure != nil {
		p.SSL = &profile.SSL{Enabled: f.SSL, Insecure: f.Insecure}
	}
	if a.opts.passwordStdin {
		line, err := bufio.NewReader(a.stdin).ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return fmt.Errorf("read the password from standard input: %s; pipe it in, e.g. printf '%%s\\n' \"$PW\" | sqlmcp config profile add ... --password-stdin", firstNonNil(err, "the first line is empty"))
		}
		p.Password = line
	}
	if cfg.File.Profiles == nil {
		cfg.File.Profiles = map[string]profile.Profile{}
	}
	cfg.File.Profiles[name] = p
	if err := cfg.Save(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Added profile %q to %s.\n", name, cfg.Path)
	if p.Password != "" && cfg.Mode()&0o077 != 0 {
		// The file keeps the mode the user gave it; say so when it exposes a password.
		fmt.Fprintf(a.stderr, "warning: %s holds a password and other users can read it (mode %04o); run: chmod 600 %s\n", cfg.Path, cfg.Mode(), cfg.Path)
	}
	return nil
}

func firstNonNil(err error, fallback string) string {
	if err != nil && err.Error() != "EOF" {
		return err.Error()
	}
	return fallback
}

func runProfileRemove(a *app, args []string) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	name := args[0]
	if _, ok := cfg.File.Profiles[name]; !ok {
		return &profile.NotFoundError{Name: name, From: profile.FromArgument, Path: cfg.Path, Available: cfg.Names()}
	}
	delete(cfg.File.Profiles, name)
	note := ""
	if cfg.File.Current == name {
		cfg.File.Current = ""
		note = " It was the current profile; none is current now."
	}
	if err := cfg.Save(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Removed profile %q from %s.%s\n", name, cfg.Path, note)
	return nil
}
