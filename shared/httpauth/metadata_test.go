package httpauth_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

func getJSON(t *testing.T, u string, v any) *http.Response {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	return resp
}

// TestResourceMetadata checks RFC 9728 documents in native and proxy mode,
// at the root and at each protected path, open to anyone.
func TestResourceMetadata(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	native := newHarness(t, httpauth.Config{Provider: "oidc", Issuer: idp.Issuer(), Audience: "a", HTTPClient: idp.HTTPClient()})
	proxy, _ := newProxy(t)
	for _, tt := range []struct {
		name string
		h    *harness
		as   string
	}{{"native", native, idp.Issuer()}, {"proxy", proxy, proxy.base}} {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"", "/mcp", "/sse"} {
				var m httpauth.ResourceMetadata
				resp := getJSON(t, tt.h.base+"/.well-known/oauth-protected-resource"+path, &m)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: HTTP %d", path, resp.StatusCode)
				}
				if m.Resource != tt.h.base+path || !slices.Equal(m.AuthorizationServers, []string{tt.as}) ||
					!slices.Equal(m.BearerMethodsSupported, []string{"header"}) || !slices.Contains(m.ScopesSupported, "openid") {
					t.Errorf("%s: metadata %+v", path, m)
				}
				if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
					t.Errorf("%s: no CORS", path)
				}
			}
			var m httpauth.ResourceMetadata
			if resp := getJSON(t, tt.h.base+"/.well-known/oauth-protected-resource/other", &m); resp.StatusCode != http.StatusNotFound {
				t.Errorf("metadata for an unprotected path: HTTP %d", resp.StatusCode)
			}
			var hz map[string]string
			if resp := getJSON(t, tt.h.base+"/healthz", &hz); resp.StatusCode != http.StatusOK {
				t.Errorf("/healthz: HTTP %d, want it open", resp.StatusCode)
			}
		})
	}
	// Only proxy mode is an authorisation server.
	var asm httpauth.ServerMetadata
	if resp := getJSON(t, native.base+"/.well-known/oauth-authorization-server", &asm); resp.StatusCode != http.StatusNotFound {
		t.Errorf("native mode serves authorization server metadata: HTTP %d", resp.StatusCode)
	}
	resp := getJSON(t, proxy.base+"/.well-known/oauth-authorization-server", &asm)
	b := proxy.base
	if resp.StatusCode != http.StatusOK || asm.Issuer != b || asm.AuthorizationEndpoint != b+"/oauth/authorize" ||
		asm.TokenEndpoint != b+"/oauth/token" || asm.RegistrationEndpoint != b+"/oauth/register" ||
		!slices.Equal(asm.CodeChallengeMethodsSupported, []string{"S256"}) ||
		!slices.Equal(asm.GrantTypesSupported, []string{"authorization_code", "refresh_token"}) ||
		!slices.Equal(asm.ResponseTypesSupported, []string{"code"}) {
		t.Errorf("authorization server metadata: HTTP %d %+v", resp.StatusCode, asm)
	}
}
