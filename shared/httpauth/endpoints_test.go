package httpauth_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// TestTokenEndpointErrors covers the token endpoint's refusals that the
// x/oauth2 client cannot produce.
func TestTokenEndpointErrors(t *testing.T) {
	h, _ := newProxy(t)
	f := newFlow(t, h, clientRedirect)
	v := oauth2.GenerateVerifier()
	code := f.login(t, v).Query().Get("code")
	form := func(kv ...string) url.Values {
		vals := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			vals.Set(kv[i], kv[i+1])
		}
		return vals
	}
	tests := []struct {
		name        string
		contentType string
		form        url.Values
		status      int
		code        string
	}{
		{"json body", "application/json", form("grant_type", "authorization_code"), 400, "invalid_request"},
		{"no grant type", "", form("client_id", f.clientID), 400, "invalid_request"},
		{"unsupported grant", "", form("grant_type", "password", "client_id", f.clientID), 400, "unsupported_grant_type"},
		{"client credentials", "", form("grant_type", "client_credentials", "client_id", f.clientID), 400, "unsupported_grant_type"},
		{"unknown client", "", form("grant_type", "authorization_code", "client_id", "nobody", "code", code, "code_verifier", v), 401, "invalid_client"},
		{"foreign resource", "", form("grant_type", "authorization_code", "client_id", f.clientID, "code", code, "code_verifier", v, "resource", "https://other.example/mcp"), 400, "invalid_target"},
		{"other redirect_uri", "", form("grant_type", "authorization_code", "client_id", f.clientID, "code", code, "code_verifier", v, "redirect_uri", "http://127.0.0.1:1/other"), 400, "invalid_grant"},
		{"missing redirect_uri", "", form("grant_type", "authorization_code", "client_id", f.clientID, "code", code, "code_verifier", v), 400, "invalid_grant"},
		{"forged refresh token", "", form("grant_type", "refresh_token", "client_id", f.clientID, "refresh_token", "forged"), 400, "invalid_grant"},
		{"code as refresh token", "", form("grant_type", "refresh_token", "client_id", f.clientID, "refresh_token", code), 400, "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := tt.contentType
			if ct == "" {
				ct = "application/x-www-form-urlencoded"
			}
			resp, err := http.Post(h.base+"/oauth/token", ct, strings.NewReader(tt.form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]string
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tt.status || body["error"] != tt.code || body["error_description"] == "" {
				t.Errorf("HTTP %d %v; want %d %s with a description", resp.StatusCode, body, tt.status, tt.code)
			}
			if resp.Header.Get("Cache-Control") != "no-store" {
				t.Error("token endpoint answer is cacheable")
			}
		})
	}
	// None of the refusals burnt the code: it still works once.
	tok, err := f.conf.Exchange(t.Context(), code, oauth2.VerifierOption(v))
	if err != nil {
		t.Fatalf("exchange after refusals: %v", err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Errorf("token response %+v", tok)
	}
}

// TestRegisterErrors covers dynamic client registration's refusals.
func TestRegisterErrors(t *testing.T) {
	h, _ := newProxy(t)
	for name, body := range map[string]string{
		"not json":            `redirect_uris=x`,
		"no redirect":         `{"redirect_uris":[]}`,
		"implicit grant":      `{"redirect_uris":["http://127.0.0.1:1/cb"],"grant_types":["implicit"]}`,
		"token response type": `{"redirect_uris":["http://127.0.0.1:1/cb"],"response_types":["token"]}`,
		"fragment":            `{"redirect_uris":["http://127.0.0.1:1/cb#x"]}`,
	} {
		resp, err := http.Post(h.base+"/oauth/register", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]string
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || out["error"] == "" {
			t.Errorf("%s: HTTP %d %v; want 400 with an error", name, resp.StatusCode, out)
		}
	}
	resp, err := http.Get(h.base + "/oauth/register")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /oauth/register: HTTP %d", resp.StatusCode)
	}
}
