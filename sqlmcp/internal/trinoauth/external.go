package trinoauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/trinodb/trino-go-client/trino"
)

// External authentication (SQLENGINE_AUTH=external, the SQL shell only):
// trino-go-client performs Trino's handshake itself when
// trino.Config.ExternalAuthentication is set (the coordinator answers 401
// with WWW-Authenticate: Bearer x_redirect_server="…", x_token_server="…";
// the client sends the user to the redirect URL and polls the token server
// until it hands out the token). This file supplies what the driver leaves
// to its caller: where the user is told to go (PrintRedirect) and where the
// token is kept between runs (FileTokenCache, one 0600 file per profile).

// PrintRedirect is a trino.RedirectHandler that tells the user, on w, to
// open the sign-in URL, and opens it with open when that is set (a browser
// launcher; its failure is not an error: the printed URL remains).
func PrintRedirect(w io.Writer, open func(ctx context.Context, u *url.URL) error) trino.RedirectHandler {
	return func(ctx context.Context, u *url.URL) error {
		fmt.Fprintf(w, "Sign in to Trino in your browser:\n  %s\nWaiting for the sign-in to finish…\n", u.String())
		if open != nil {
			_ = open(ctx, u)
		}
		return nil
	}
}

// DefaultTokenDir is where the shell keeps tokens: <user config dir>/sqlmcp/tokens
// (e.g. ~/.config/sqlmcp/tokens on Linux).
func DefaultTokenDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user configuration directory for the token cache: %w", err)
	}
	return filepath.Join(d, "sqlmcp", "tokens"), nil
}

var profileName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$`)

// FileTokenCache is a trino.TokenCache kept in <dir>/<profile>.token, mode
// 0600 in a 0700 directory, so that the next run of the shell with the same
// profile reuses the token. A file readable by others, or holding an expired
// token, is not used.
type FileTokenCache struct {
	path string
	now  func() time.Time
	mu   sync.Mutex
	err  error // the last failure to save, for Err
}

// NewFileTokenCache returns the cache of profile under dir (DefaultTokenDir
// when dir is "").
func NewFileTokenCache(dir, profile string) (*FileTokenCache, error) {
	if !profileName.MatchString(profile) {
		return nil, fmt.Errorf("profile name %q cannot name a token file: use letters, digits, '.', '_' and '-'", profile)
	}
	if dir == "" {
		var err error
		if dir, err = DefaultTokenDir(); err != nil {
			return nil, err
		}
	}
	return &FileTokenCache{path: filepath.Join(dir, profile+".token"), now: time.Now}, nil
}

// Path is the file the token is kept in.
func (c *FileTokenCache) Path() string { return c.path }

// Token implements trino.TokenCache.
func (c *FileTokenCache) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	fi, err := os.Lstat(c.path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || fi.Size() > maxStaticJWT {
		return ""
	}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return ""
	}
	tok := strings.TrimSpace(string(b))
	if checkJWTShape(tok) != nil || expired(tok, c.now()) {
		return ""
	}
	return tok
}

// SetToken implements trino.TokenCache: it replaces the file atomically.
// "" removes it.
func (c *FileTokenCache) SetToken(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = c.save(token)
}

// Err is the last failure to save a token (the driver's interface cannot
// return it).
func (c *FileTokenCache) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *FileTokenCache) save(token string) error {
	if token == "" {
		if err := os.Remove(c.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the cached token: %w", err)
		}
		return nil
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the token directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return fmt.Errorf("save the token: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("save the token: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("save the token: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save the token: %w", err)
	}
	if err := os.Rename(f.Name(), c.path); err != nil {
		return fmt.Errorf("save the token: %w", err)
	}
	return nil
}

// expired reads the exp claim of a JWT without verifying it (Trino does
// that): a token past its exp would only be refused, so a new sign-in
// starts at once.
func expired(tok string, now time.Time) bool {
	parts := strings.Split(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var c struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(b, &c) != nil || c.Exp == nil {
		return false
	}
	return !now.Before(time.Unix(int64(*c.Exp), 0))
}
