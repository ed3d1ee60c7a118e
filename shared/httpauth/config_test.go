package httpauth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/serve"
)

// TestFromEnv checks start-up validation: every invalid combination is
// recorded on the reader, naming its variables, secrets never echoed.
func TestFromEnv(t *testing.T) {
	const secret = "a-secret-of-more-than-32-bytes-for-hs256!"
	base := map[string]string{"OAUTH_ENABLED": "true"}
	tests := []struct {
		name string
		env  map[string]string
		want []string // variable names in the error; none = valid
	}{
		{"disabled ignores the rest", map[string]string{"OAUTH_ENABLED": "false", "OAUTH_PROVIDER": "nope", "JWT_SECRET": "x"}, nil},
		{"minimal hmac", map[string]string{"OAUTH_PROVIDER": "hmac", "JWT_SECRET": secret, "OIDC_AUDIENCE": "x"}, nil},
		{"hmac without audience", map[string]string{"OAUTH_PROVIDER": "hmac", "JWT_SECRET": secret}, nil},
		{"hmac without JWT_SECRET", map[string]string{"OAUTH_PROVIDER": "hmac", "OIDC_AUDIENCE": "x"}, []string{"JWT_SECRET: not set"}},
		{"short JWT_SECRET", map[string]string{"OAUTH_PROVIDER": "hmac", "JWT_SECRET": "short-secret-value"}, []string{"JWT_SECRET: value rejected (hidden)"}},
		{"proxy without client", map[string]string{"OAUTH_MODE": "proxy", "OIDC_ISSUER": "https://idp.example"}, []string{"OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET"}},
		{"proxy with hmac", map[string]string{"OAUTH_MODE": "proxy", "OAUTH_PROVIDER": "hmac", "JWT_SECRET": secret, "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s"}, []string{"OAUTH_PROVIDER"}},
		{"http issuer off loopback", map[string]string{"OIDC_ISSUER": "http://idp.example", "OIDC_AUDIENCE": "a"}, []string{"OIDC_ISSUER"}},
		{"http issuer on loopback", map[string]string{"OIDC_ISSUER": "http://127.0.0.1:5556/dex", "OIDC_AUDIENCE": "a"}, nil},
		{"issuer not a URL", map[string]string{"OAUTH_PROVIDER": "okta", "OIDC_ISSUER": "dev-123.okta.com", "OIDC_AUDIENCE": "a"}, []string{"OIDC_ISSUER"}},
		{"okta without issuer", map[string]string{"OAUTH_PROVIDER": "okta", "OIDC_AUDIENCE": "a"}, []string{"OIDC_ISSUER: not set"}},
		{"native oidc without audience", map[string]string{"OIDC_ISSUER": "https://idp.example"}, []string{"OIDC_AUDIENCE"}},
		{"google without audience or client", map[string]string{"OAUTH_PROVIDER": "google"}, []string{"OIDC_AUDIENCE"}},
		{"google with client id", map[string]string{"OAUTH_PROVIDER": "google", "OIDC_CLIENT_ID": "123.apps.googleusercontent.com"}, nil},
		{"redirect not a URL", map[string]string{"OAUTH_MODE": "proxy", "OIDC_ISSUER": "https://idp.example", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s", "OAUTH_REDIRECT_URI": "callback"}, []string{"OAUTH_REDIRECT_URI"}},
		{"allowlist entry not a URL", map[string]string{"OAUTH_MODE": "proxy", "OIDC_ISSUER": "https://idp.example", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s", "OAUTH_REDIRECT_URI": "https://a.example/cb, not a url"}, []string{"OAUTH_REDIRECT_URI"}},
		{"proxy allowlist", map[string]string{"OAUTH_MODE": "proxy", "OIDC_ISSUER": "https://idp.example", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s", "OAUTH_REDIRECT_URI": "https://a.example/cb,cursor://x/cb"}, nil},
		{"bad base URL", map[string]string{"OAUTH_PROVIDER": "hmac", "JWT_SECRET": secret, "MCP_BASE_URL": "ftp://mcp.example"}, []string{"MCP_BASE_URL"}},
		{"bad mode", map[string]string{"OAUTH_MODE": "both", "OIDC_ISSUER": "https://idp.example", "OIDC_AUDIENCE": "a"}, []string{"OAUTH_MODE"}},
		{"everything at once", map[string]string{"OAUTH_MODE": "proxy", "OIDC_ISSUER": "http://idp.example", "JWT_SECRET": "short", "OAUTH_REDIRECT_URI": "x"},
			[]string{"OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "JWT_SECRET", "OAUTH_REDIRECT_URI"}},
	}
	// An unknown enum value is reported and replaced by the default, so the
	// Config itself is valid.
	enumFallback := map[string]bool{"bad mode": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tt.env {
				env[k] = v
			}
			r := envconfig.New(func(k string) string { return env[k] })
			cfg := httpauth.FromEnv(r, "http://localhost:8080")
			err := r.Err()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("valid configuration refused: %v", err)
				}
				if cfg.Enabled {
					if _, err := httpauth.New(context.Background(), cfg, nil); err != nil && cfg.Provider == "hmac" {
						t.Fatalf("New: %v", err)
					}
				}
				return
			}
			var ce *envconfig.Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a configuration error naming %v", err, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
			for _, s := range []string{env["JWT_SECRET"], env["OIDC_CLIENT_SECRET"]} {
				if len(s) > 1 && strings.Contains(err.Error(), s) {
					t.Errorf("error echoes a secret:\n%v", err)
				}
			}
			// New refuses the same configuration when built directly.
			if _, nerr := httpauth.New(context.Background(), cfg, nil); nerr == nil && !enumFallback[tt.name] {
				t.Error("New accepted an invalid configuration")
			}
		})
	}
}

// TestMinimalServerConfig is the configuration each server's "401 when
// OAUTH_ENABLED=true" test uses, read through serve.FromEnv.
func TestMinimalServerConfig(t *testing.T) {
	env := map[string]string{"MCP_TRANSPORT": "http", "OAUTH_ENABLED": "true", "OAUTH_PROVIDER": "hmac",
		"JWT_SECRET": "0123456789abcdef0123456789abcdef", "OIDC_AUDIENCE": "x"}
	r := envconfig.New(func(k string) string { return env[k] })
	cfg := serve.FromEnv(r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	layer, err := httpauth.New(context.Background(), cfg.Auth, nil)
	if err != nil || layer == nil {
		t.Fatalf("New: %v %v", layer, err)
	}
	if cfg.Auth.BaseURL != "http://127.0.0.1:8080" {
		t.Errorf("base URL %q", cfg.Auth.BaseURL)
	}
}

func TestDisabledIsNil(t *testing.T) {
	l, err := httpauth.New(context.Background(), httpauth.Config{}, nil)
	if l != nil || err != nil {
		t.Fatalf("New(disabled) = %v, %v; want nil, nil", l, err)
	}
}
