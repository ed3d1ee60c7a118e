package profile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Environment variables read by Resolve.
const (
	EnvProfile     = "SQLENGINE_PROFILE"
	EnvHost        = "SQLENGINE_HOST"
	EnvPort        = "SQLENGINE_PORT"
	EnvUser        = "SQLENGINE_USER"
	EnvPassword    = "SQLENGINE_PASSWORD"
	EnvCatalog     = "SQLENGINE_CATALOG"
	EnvSchema      = "SQLENGINE_SCHEMA"
	EnvSSL         = "SQLENGINE_SSL"
	EnvSSLInsecure = "SQLENGINE_SSL_INSECURE"
)

// Built-in defaults, used when no flag, profile or variable sets a field.
const (
	DefaultHost = "localhost"
	DefaultPort = 8080
	DefaultUser = "sqlmcp"
)

// Flags are the connection settings given on the command line. Nil pointers
// were not given. The password is deliberately absent: it never comes from
// a command line that other users can read.
type Flags struct {
	Profile  string
	Host     *string
	Port     *int
	User     *string
	Catalog  *string
	Schema   *string
	SSL      *bool
	Insecure *bool
}

// Where a profile name came from (Connection.ProfileFrom).
const (
	FromFlag    = "--profile"
	FromEnv     = EnvProfile
	FromCurrent = "current"
	FromDefault = "default profile"
	// FromArgument is a profile named as a command's argument (config profile use|show|remove).
	FromArgument = "argument"
)

// Connection is the resolved connection: every field set, plus where each
// came from ("--host", `profile "dev"`, "SQLENGINE_HOST", "default").
type Connection struct {
	Host     string
	Port     int
	User     string
	Password string
	Catalog  string
	Schema   string
	SSL      bool
	Insecure bool
	// Auth and JWTFile: the profile's auth and jwt_file (SQLENGINE_AUTH and
	// SQLENGINE_JWT_FILE when it sets none).
	Auth, JWTFile string

	Profile     string            // the profile used, "" when none
	ProfileFrom string            // FromFlag, FromEnv, FromCurrent, FromDefault or ""
	Sources     map[string]string // field name (host, port, ...) → the source that decided it
	ConfigPath  string            // the configuration file consulted (may not exist)
}

// NotFoundError is a profile that is named but absent from the file.
type NotFoundError struct {
	Name      string
	From      string // FromFlag, FromEnv or FromCurrent
	Path      string
	Available []string
}

func (e *NotFoundError) Error() string {
	where := map[string]string{FromFlag: "--profile", FromEnv: EnvProfile, FromCurrent: `the file's "current"`, FromArgument: "the command line"}[e.From]
	avail := "none are defined; add one with: sqlmcp config profile add " + e.Name + " --host HOST"
	if len(e.Available) > 0 {
		avail = "defined profiles: " + strings.Join(e.Available, ", ")
	}
	return fmt.Sprintf("use profile %q named by %s: no such profile in %s; %s", e.Name, where, e.Path, avail)
}

// EnvError is an invalid SQLENGINE_* variable.
type EnvError struct {
	Name, Value, Accepted string
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("read %s=%q: invalid value; accepted: %s", e.Name, e.Value, e.Accepted)
}

// Resolve loads the configuration file and resolves the connection with the
// package's precedence order. Errors are *FileError (bad file),
// *NotFoundError (named profile absent) or *EnvError (bad variable).
func Resolve(getenv func(string) string, flags Flags) (Connection, error) {
	cfg, err := Load(getenv)
	if err != nil {
		return Connection{}, err
	}
	return ResolveWith(cfg, getenv, flags)
}

// ResolveWith resolves the connection against an already loaded file.
func ResolveWith(cfg *Config, getenv func(string) string, flags Flags) (Connection, error) {
	c := Connection{Sources: map[string]string{}, ConfigPath: cfg.Path}

	// Rungs 2 to 5: which profile.
	name, from := flags.Profile, FromFlag
	if name == "" {
		name, from = strings.TrimSpace(getenv(EnvProfile)), FromEnv
	}
	if name == "" {
		name, from = cfg.File.Current, FromCurrent
	}
	var p Profile
	if name != "" {
		var ok bool
		if p, ok = cfg.File.Profiles[name]; !ok {
			return Connection{}, &NotFoundError{Name: name, From: from, Path: cfg.Path, Available: cfg.Names()}
		}
	} else if d, ok := cfg.File.Profiles["default"]; ok {
		name, from, p = "default", FromDefault, d
	} else {
		from = ""
	}
	c.Profile, c.ProfileFrom = name, from
	prof := fmt.Sprintf("profile %q", name)

	env := func(key string) string { return strings.TrimSpace(getenv(key)) }
	pickStr := func(field string, flag *string, pv, envName, def string) string {
		switch {
		case flag != nil:
			c.Sources[field] = "--" + field
			return *flag
		case pv != "":
			c.Sources[field] = prof
			return pv
		case env(envName) != "":
			c.Sources[field] = envName
			return env(envName)
		}
		c.Sources[field] = "default"
		return def
	}
	c.Host = pickStr("host", flags.Host, p.Host, EnvHost, DefaultHost)
	c.User = pickStr("user", flags.User, p.User, EnvUser, DefaultUser)
	c.Catalog = pickStr("catalog", flags.Catalog, p.Catalog, EnvCatalog, "")
	c.Schema = pickStr("schema", flags.Schema, p.Schema, EnvSchema, "")
	c.Auth = pickStr("auth", nil, p.Auth, "SQLENGINE_AUTH", "")
	c.JWTFile = pickStr("jwt_file", nil, p.JWTFile, "SQLENGINE_JWT_FILE", "")

	switch {
	case flags.Port != nil:
		c.Port, c.Sources["port"] = *flags.Port, "--port"
	case p.Port != 0:
		c.Port, c.Sources["port"] = p.Port, prof
	case env(EnvPort) != "":
		n, err := strconv.Atoi(env(EnvPort))
		if err != nil || n < 1 || n > 65535 {
			return Connection{}, &EnvError{Name: EnvPort, Value: env(EnvPort), Accepted: "a port number from 1 to 65535"}
		}
		c.Port, c.Sources["port"] = n, EnvPort
	default:
		c.Port, c.Sources["port"] = DefaultPort, "default"
	}

	// The password is never trimmed: spaces may be part of it.
	switch {
	case p.Password != "":
		c.Password, c.Sources["password"] = p.Password, prof
	case getenv(EnvPassword) != "":
		c.Password, c.Sources["password"] = getenv(EnvPassword), EnvPassword
	default:
		c.Sources["password"] = "default"
	}

	pickBool := func(field, flagName string, flag *bool, pv *bool, envName string) (bool, error) {
		switch {
		case flag != nil:
			c.Sources[field] = flagName
			return *flag, nil
		case pv != nil:
			c.Sources[field] = prof
			return *pv, nil
		case env(envName) != "":
			b, ok := envconfig.ParseBool(env(envName))
			if !ok {
				return false, &EnvError{Name: envName, Value: env(envName), Accepted: "true or false"}
			}
			c.Sources[field] = envName
			return b, nil
		}
		c.Sources[field] = "default"
		return false, nil
	}
	var ssl SSL
	if p.SSL != nil {
		ssl = *p.SSL
	}
	var err error
	if c.SSL, err = pickBool("ssl", "--ssl", flags.SSL, ssl.Enabled, EnvSSL); err != nil {
		return Connection{}, err
	}
	if c.Insecure, err = pickBool("insecure", "--insecure", flags.Insecure, ssl.Insecure, EnvSSLInsecure); err != nil {
		return Connection{}, err
	}
	return c, nil
}
