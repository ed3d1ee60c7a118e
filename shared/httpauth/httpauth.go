// Package httpauth is the OAuth 2.1 resource-server layer of the HTTP
// transport: token validation before any MCP message is processed,
// protected-resource metadata, and the proxy-mode authorisation flow.
//
// Two modes exist. In native mode the MCP client runs the OAuth flow with the
// identity provider itself and this server only validates the bearer tokens
// it presents. In proxy mode this server is the authorisation server the
// client talks to: it registers clients, runs the flow with the identity
// provider on their behalf and issues its own short-lived tokens.
package httpauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Config is the OAuth configuration shared by every server.
type Config struct {
	Enabled      bool
	Mode         string // "native" or "proxy"
	Provider     string // "hmac", "okta", "google", "azure", "oidc"
	Issuer       string
	Audience     string
	ClientID     string
	ClientSecret string
	RedirectURIs []string
	JWTSecret    string
	BaseURL      string // public base URL of this server, no trailing slash

	// RequiredIdentity, when set, names the identity field every token must
	// carry: IdentityUsername, IdentityEmail or IdentitySubject. A server
	// that acts as the caller on its back end (sqlmcp impersonation) sets
	// it, so that such a token is refused with 401 before any MCP message
	// instead of failing later inside a tool. Not read from the environment.
	RequiredIdentity string

	// UpstreamAccess (proxy mode) keeps the identity provider's access
	// token behind each token this server issues, for a server that
	// exchanges it at that provider (RFC 8693; sqlmcp's token-exchange):
	// the token is sealed (encrypted with JWT_SECRET) into the issued
	// token, whose lifetime is capped at the provider token's, and a
	// refresh renews both. AccessTokenFromContext then returns the
	// provider's token, never this server's own. Not read from the
	// environment.
	UpstreamAccess bool

	// HTTPClient talks to the identity provider (discovery, JWKS, token
	// exchange). Nil means a client with a 15-second timeout. Not read from
	// the environment; tests and embedders set it.
	HTTPClient *http.Client
}

// Modes and provider kinds.
const (
	ModeNative = "native"
	ModeProxy  = "proxy"

	ProviderHMAC   = "hmac"
	ProviderOkta   = "okta"
	ProviderGoogle = "google"
	ProviderAzure  = "azure"
	ProviderOIDC   = "oidc"
)

// Identity fields RequiredIdentity can name.
const (
	IdentityUsername = "username"
	IdentityEmail    = "email"
	IdentitySubject  = "subject"
)

// googleIssuer is the default issuer for OAUTH_PROVIDER=google.
const googleIssuer = "https://accounts.google.com"

// Vars documents the OAuth variables.
var Vars = []envconfig.Var{
	{Name: "OAUTH_ENABLED", Default: "false", Description: "require OAuth bearer tokens on the HTTP transport (stdio is never affected)"},
	{Name: "OAUTH_MODE", Default: "native", Description: "native (clients run the flow; tokens are validated) or proxy (this server runs the flow)"},
	{Name: "OAUTH_PROVIDER", Default: "oidc", Description: "hmac, okta, google, azure or oidc"},
	{Name: "OIDC_ISSUER", Description: "issuer URL of the identity provider (https unless loopback; google defaults to https://accounts.google.com)"},
	{Name: "OIDC_AUDIENCE", Description: "expected token audience (required in native mode except for hmac; google defaults to OIDC_CLIENT_ID)"},
	{Name: "OIDC_CLIENT_ID", Description: "this server's client id at the provider (proxy mode)"},
	{Name: "OIDC_CLIENT_SECRET", Secret: true, Description: "this server's client secret at the provider (proxy mode; environment only)"},
	{Name: "OAUTH_REDIRECT_URI", Description: "one callback URI (fixed mode: clients must use loopback redirects) or a comma-separated allowlist of client redirect URIs (proxy mode)"},
	{Name: "JWT_SECRET", Secret: true, Description: "HMAC secret of at least 32 bytes: verifies hmac tokens and signs proxy-mode state and tokens; set it when several replicas serve one deployment (environment only)"},
	{Name: "MCP_BASE_URL", Description: "public URL of this server (default http://MCP_HOST:MCP_PORT)"},
}

// FromEnv reads the OAuth variables; defaultBaseURL is used when MCP_BASE_URL
// is unset. Invalid combinations are recorded on r, so that the caller's
// usual exit-2 path reports them together with every other bad variable.
func FromEnv(r *envconfig.Reader, defaultBaseURL string) Config {
	c := Config{Enabled: r.Bool("OAUTH_ENABLED", false)}
	c.BaseURL = strings.TrimRight(r.String("MCP_BASE_URL", defaultBaseURL), "/")
	if !c.Enabled {
		return c
	}
	c.Mode = r.Enum("OAUTH_MODE", ModeNative, ModeNative, ModeProxy)
	c.Provider = r.Enum("OAUTH_PROVIDER", ProviderOIDC, ProviderHMAC, ProviderOkta, ProviderGoogle, ProviderAzure, ProviderOIDC)
	c.Issuer = strings.TrimRight(r.String("OIDC_ISSUER", ""), "/")
	c.Audience = r.String("OIDC_AUDIENCE", "")
	c.ClientID = r.String("OIDC_CLIENT_ID", "")
	c.ClientSecret = r.Secret("OIDC_CLIENT_SECRET")
	c.RedirectURIs = r.List("OAUTH_REDIRECT_URI", nil)
	c.JWTSecret = r.Secret("JWT_SECRET")
	if c.Provider == ProviderGoogle && c.Issuer == "" {
		c.Issuer = googleIssuer
	}
	for _, p := range c.problems() {
		if p.Secret {
			r.FailSecret(p.Name, p.Value, p.Accepted)
		} else {
			r.Fail(p.Name, p.Value, p.Accepted)
		}
	}
	return c
}

// Identity is the verified caller. It is shared by every request made with
// the same token (the verification cache), so treat it as read-only.
type Identity struct {
	Issuer   string // iss of the token (of the provider's token in proxy mode)
	Subject  string // sub; never empty: tokens without one are refused
	Username string
	Email    string
	Claims   map[string]any
}

type identityKey struct{}

// ContextWithIdentity returns ctx carrying id.
func ContextWithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFromContext returns the verified caller, if any.
func IdentityFromContext(ctx context.Context) (*Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(*Identity)
	return id, ok && id != nil
}

type accessTokenKey struct{}

// AccessTokenFromContext returns the caller's access token as issued by the
// identity provider, when the request carried one (native mode: the bearer
// token the middleware verified). It is for exchanging at that provider
// (RFC 8693) only: never log it, never forward it to another service. In
// proxy mode the bearer is this server's own token, which the provider
// cannot exchange: with Config.UpstreamAccess it is the provider's access
// token sealed in that token while it is valid, otherwise there is none.
func AccessTokenFromContext(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(accessTokenKey{}).(string)
	return t, ok && t != ""
}

// Layer validates tokens and serves the OAuth endpoints.
type Layer struct {
	cfg     Config
	logger  *slog.Logger
	secret  []byte // JWT_SECRET or a random per-process one
	cache   *tokenCache
	hmac    *hmacVerifier // OAUTH_PROVIDER=hmac
	own     *hmacVerifier // proxy mode: tokens this server issued
	oidc    *oidcVerifier // okta, google, azure, oidc
	proxy   *proxyFlow    // proxy mode only
	metaURL string        // resource_metadata advertised in challenges
	now     func() time.Time

	onFailure func(reason string) // set once before serving
}

// OnFailure sets f to be called with a short reason (see FailureReason)
// for every refused request. Call it before the layer serves.
func (l *Layer) OnFailure(f func(reason string)) { l.onFailure = f }

// New builds the layer from cfg. It returns nil, nil when OAuth is disabled.
// The identity provider's discovery document is fetched here; when it cannot
// be reached the layer still starts, answers 503 to protected requests and
// retries discovery on later requests.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Layer, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	cfg.Issuer = strings.TrimRight(cfg.Issuer, "/")
	if cfg.Mode == "" {
		cfg.Mode = ModeNative
	}
	if cfg.Provider == "" {
		cfg.Provider = ProviderOIDC
	}
	if cfg.Provider == ProviderGoogle && cfg.Issuer == "" {
		cfg.Issuer = googleIssuer
	}
	if ps := cfg.problems(); len(ps) > 0 {
		return nil, &envconfig.Error{Problems: ps}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	l := &Layer{
		cfg:     cfg,
		logger:  logger.With("component", "oauth"),
		cache:   newTokenCache(defaultCacheSize),
		metaURL: cfg.BaseURL + protectedResourcePath,
		now:     time.Now,
	}
	l.secret = []byte(cfg.JWTSecret)
	if len(l.secret) == 0 {
		l.secret = make([]byte, 32)
		if _, err := rand.Read(l.secret); err != nil {
			return nil, fmt.Errorf("generate a random JWT secret: %w", err)
		}
		l.logger.Warn("JWT_SECRET is not set: using a random secret for this process only; " +
			"state, codes and tokens it issues are not valid on other replicas or after a restart; " +
			"set JWT_SECRET (32+ bytes, the same on every replica) to share them")
	}
	switch cfg.Provider {
	case ProviderHMAC:
		l.hmac = &hmacVerifier{key: l.secret, issuer: cfg.Issuer, audiences: audiencesFor(cfg), now: l.clock}
	default:
		l.oidc = newOIDCVerifier(cfg, l.logger, l.clock)
	}
	if cfg.Mode == ModeProxy {
		l.own = &hmacVerifier{
			key: deriveKey(l.secret, "access-token"), issuer: cfg.BaseURL,
			audiences: []string{cfg.BaseURL}, typ: accessTokenType, now: l.clock, own: true,
		}
		proxy, err := newProxyFlow(l)
		if err != nil {
			return nil, fmt.Errorf("set up the OAuth proxy: %w", err)
		}
		l.proxy = proxy
	}
	if l.oidc != nil {
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := l.oidc.init(dctx)
		cancel()
		if err != nil {
			l.logger.Error("identity provider discovery failed; protected requests get 503 until it succeeds",
				"issuer", cfg.Issuer, "error", err.Error())
		}
	}
	if cfg.Mode == ModeNative && len(cfg.RedirectURIs) > 0 {
		l.logger.Warn("OAUTH_REDIRECT_URI is ignored in native mode: clients register their redirect URIs at the identity provider")
	}
	if cfg.Mode == ModeProxy && !secureURL(cfg.BaseURL) {
		l.logger.Warn("MCP_BASE_URL is plain http on a non-loopback host: OAuth 2.1 requires https for the authorization endpoints; set MCP_BASE_URL to the https URL clients use", "base_url", cfg.BaseURL)
	}
	l.logger.Info("OAuth enabled", "mode", cfg.Mode, "provider", cfg.Provider, "issuer", cfg.Issuer,
		"audience", strings.Join(audiencesFor(cfg), ","), "base_url", cfg.BaseURL)
	return l, nil
}

func (l *Layer) clock() time.Time { return l.now() }

// SessionKey returns a key for binding transport sessions to identities,
// derived from JWT_SECRET (or this process's random secret), so that
// replicas sharing JWT_SECRET recognise each other's sessions.
func (l *Layer) SessionKey() []byte { return deriveKey(l.secret, "session-id") }
