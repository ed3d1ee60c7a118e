package httpauth

import (
	"net"
	"net/url"
	"strings"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// minSecretLen is the shortest JWT_SECRET accepted: HS256 needs 256 bits.
const minSecretLen = 32

// problems lists every invalid variable or combination in c, naming the
// variables involved. Secrets are reported without their values.
func (c Config) problems() []envconfig.Problem {
	if !c.Enabled {
		return nil
	}
	var ps []envconfig.Problem
	fail := func(name, value, accepted string) {
		ps = append(ps, envconfig.Problem{Name: name, Value: value, Accepted: accepted})
	}
	failSecret := func(name, value, accepted string) {
		ps = append(ps, envconfig.Problem{Name: name, Value: value, Accepted: accepted, Secret: true})
	}
	if c.Mode != ModeNative && c.Mode != ModeProxy {
		fail("OAUTH_MODE", c.Mode, "one of native, proxy")
	}
	switch c.Provider {
	case ProviderHMAC, ProviderOkta, ProviderGoogle, ProviderAzure, ProviderOIDC:
	default:
		fail("OAUTH_PROVIDER", c.Provider, "one of hmac, okta, google, azure, oidc")
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		fail("MCP_BASE_URL", c.BaseURL, "the public http(s) URL of this server without query or fragment, e.g. https://mcp.example.com")
	}
	if len(c.JWTSecret) > 0 && len(c.JWTSecret) < minSecretLen {
		failSecret("JWT_SECRET", c.JWTSecret, "at least 32 bytes, e.g. the output of: openssl rand -base64 48")
	}
	if c.Provider == ProviderHMAC {
		if c.JWTSecret == "" {
			failSecret("JWT_SECRET", "", "required when OAUTH_PROVIDER=hmac: at least 32 bytes, e.g. the output of: openssl rand -base64 48")
		}
		if c.Mode == ModeProxy {
			fail("OAUTH_PROVIDER", c.Provider, "okta, google, azure or oidc when OAUTH_MODE=proxy (hmac has no identity provider to run the login with; use OAUTH_MODE=native)")
		}
	} else {
		issuer := c.Issuer
		if issuer == "" && c.Provider == ProviderGoogle {
			issuer = googleIssuer
		}
		if issuer == "" {
			fail("OIDC_ISSUER", "", "required when OAUTH_PROVIDER="+c.Provider+": the issuer URL of the identity provider, e.g. https://example.okta.com/oauth2/default")
		} else if !secureURL(issuer) {
			fail("OIDC_ISSUER", issuer, "an https URL (http only on a loopback host) without query or fragment")
		}
		if c.Mode == ModeNative && len(audiencesFor(c)) == 0 {
			accepted := "required when OAUTH_MODE=native and OAUTH_PROVIDER=" + c.Provider + ": the audience (aud) your access tokens carry"
			if c.Provider == ProviderGoogle {
				accepted += ", or set OIDC_CLIENT_ID (Google ID tokens carry the client id)"
			}
			fail("OIDC_AUDIENCE", "", accepted)
		}
	}
	if c.Mode == ModeProxy {
		if c.ClientID == "" {
			fail("OIDC_CLIENT_ID", "", "required when OAUTH_MODE=proxy: this server's client id at the identity provider")
		}
		if c.ClientSecret == "" {
			failSecret("OIDC_CLIENT_SECRET", "", "required when OAUTH_MODE=proxy: this server's client secret at the identity provider")
		}
	}
	switch c.RequiredIdentity {
	case "", IdentityUsername, IdentityEmail, IdentitySubject:
	default:
		fail("RequiredIdentity", c.RequiredIdentity, "one of username, email, subject")
	}
	switch len(c.RedirectURIs) {
	case 0:
	case 1:
		if u, err := url.Parse(c.RedirectURIs[0]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
			fail("OAUTH_REDIRECT_URI", c.RedirectURIs[0], "one absolute http(s) URL, this server's callback as registered at the provider (e.g. https://mcp.example.com/oauth/callback), or a comma-separated allowlist of client redirect URIs")
		}
	default:
		for _, v := range c.RedirectURIs {
			if u, err := url.Parse(v); err != nil || u.Scheme == "" || (u.Host == "" && u.Path == "") || u.Fragment != "" {
				fail("OAUTH_REDIRECT_URI", v, "absolute URLs without fragment (a comma-separated allowlist of client redirect URIs)")
			}
		}
	}
	return ps
}

// audiencesFor returns the audiences a provider token must carry one of.
// Empty means no audience check (hmac without OIDC_AUDIENCE).
func audiencesFor(c Config) []string {
	aud := c.Audience
	if aud == "" && c.Provider == ProviderGoogle {
		aud = c.ClientID // Google ID tokens are issued to the client id
	}
	if aud == "" {
		return nil
	}
	out := []string{aud}
	if c.Provider == ProviderAzure {
		// Azure puts either the application id or its "api://" URI in aud,
		// depending on the token version the app registration asks for.
		if rest, ok := strings.CutPrefix(aud, "api://"); ok {
			out = append(out, rest)
		} else if !strings.Contains(aud, "://") {
			out = append(out, "api://"+aud)
		}
	}
	return out
}

// secureURL reports whether v is an absolute https URL, or http on a loopback
// host, with no query or fragment.
func secureURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		return isLoopbackHost(u.Hostname())
	}
	return false
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
