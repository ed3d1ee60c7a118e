package trinoauth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Static is a TokenSource that always returns the same token: a service
// account's JWT (SQLENGINE_AUTH=jwt).
type Static struct{ token string }

// Token implements TokenSource.
func (s *Static) Token(context.Context) (string, error) { return s.token, nil }

// maxStaticJWT bounds a configured token; Trino's default request header
// limit is far below it.
const maxStaticJWT = 64 << 10

// LoadJWT returns the static JWT from value (SQLENGINE_JWT) or, when value
// is empty, from the file at path (SQLENGINE_JWT_FILE). Exactly one must be
// given. A file readable by others is refused, as for an SSH key. Errors
// never quote the token.
func LoadJWT(value, path string) (*Static, error) {
	switch {
	case value != "" && path != "":
		return nil, errors.New("give SQLENGINE_JWT or SQLENGINE_JWT_FILE, not both")
	case value == "" && path == "":
		return nil, errors.New("SQLENGINE_AUTH=jwt needs SQLENGINE_JWT or SQLENGINE_JWT_FILE")
	case path != "":
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("read the JWT file: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("the JWT file %s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
		}
		if fi.Size() > maxStaticJWT {
			return nil, fmt.Errorf("the JWT file %s is larger than %d bytes: it holds no single JWT", path, maxStaticJWT)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read the JWT file: %w", err)
		}
		value = string(b)
	}
	value = strings.TrimSpace(value)
	if err := checkJWTShape(value); err != nil {
		return nil, err
	}
	return &Static{token: value}, nil
}

// checkJWTShape accepts three dot-separated base64url parts, nothing else
// (a token with spaces or CR/LF could split the header it is sent in).
func checkJWTShape(s string) error {
	if len(s) > maxStaticJWT {
		return errors.New("the JWT is too large")
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return errors.New("the JWT is not three dot-separated parts (header.payload.signature)")
	}
	for _, p := range parts {
		for _, r := range p {
			if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return errors.New("the JWT contains characters outside base64url")
			}
		}
	}
	return nil
}
