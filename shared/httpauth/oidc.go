package httpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// asymmetricAlgs are the only algorithms accepted from an identity provider:
// "none" and the HMAC family are refused, whatever discovery advertises.
var asymmetricAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512,
	oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512,
	oidc.EdDSA,
}

// discoveryRetry spaces discovery attempts while the provider is unreachable.
const discoveryRetry = 5 * time.Second

// errUnavailable means the identity provider could not be reached to verify
// a token; the client is not at fault, so it gets 503, not 401.
var errUnavailable = errors.New("identity provider unavailable")

// oidcVerifier verifies tokens of okta, google, azure and oidc providers with
// go-oidc against the issuer's discovery document and JWKS. go-oidc refetches
// the JWKS when it meets an unknown key id, which handles key rotation.
type oidcVerifier struct {
	cfg       Config
	logger    *slog.Logger
	now       func() time.Time
	audiences []string

	mu          sync.Mutex
	provider    *oidc.Provider
	access      *oidc.IDTokenVerifier // bearer tokens: aud checked by us
	idTokens    *oidc.IDTokenVerifier // proxy mode: ID tokens issued to OIDC_CLIENT_ID
	issuerTmpl  string                // Azure multi-tenant issuer with {tenantid}
	azureIssuer string                // Azure issuer published for a tenant given by name
	lastAttempt time.Time
	lastErr     error
}

func newOIDCVerifier(cfg Config, logger *slog.Logger, now func() time.Time) *oidcVerifier {
	return &oidcVerifier{cfg: cfg, logger: logger, now: now, audiences: audiencesFor(cfg)}
}

// init runs discovery once; after a failure it retries at most every
// discoveryRetry.
func (o *oidcVerifier) init(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return nil
	}
	if !o.lastAttempt.IsZero() && o.now().Sub(o.lastAttempt) < discoveryRetry {
		return o.lastErr
	}
	o.lastAttempt = o.now()
	o.lastErr = o.discover(ctx)
	if o.lastErr == nil {
		o.logger.Info("identity provider discovered", "issuer", o.cfg.Issuer)
	}
	return o.lastErr
}

func (o *oidcVerifier) discover(ctx context.Context) error {
	ctx = oidc.ClientContext(ctx, o.cfg.HTTPClient)
	if o.cfg.Provider == ProviderAzure {
		// Azure's multi-tenant endpoints (common, organizations) publish the
		// issuer "https://login.microsoftonline.com/{tenantid}/v2.0", which
		// never equals the URL it was fetched from; tokens carry the tenant's
		// own issuer. Accept the template and check iss against tid per token.
		// A tenant given by domain name (contoso.onmicrosoft.com) publishes
		// its GUID issuer. Both come from the configured host over TLS, so
		// the published issuer is trusted, on that host only.
		iss, err := fetchIssuer(ctx, o.cfg.HTTPClient, o.cfg.Issuer)
		if err != nil {
			return err
		}
		if iss != o.cfg.Issuer && sameHost(iss, o.cfg.Issuer) {
			ctx = oidc.InsecureIssuerURLContext(ctx, iss)
			if strings.Contains(iss, "{tenantid}") {
				o.issuerTmpl = iss
			} else {
				o.azureIssuer = iss
			}
		}
	}
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return fmt.Errorf("discover identity provider %s: %w", o.cfg.Issuer, err)
	}
	// Azure issuers are checked per token (tenant template, v1 issuer).
	skipIss := o.cfg.Provider == ProviderAzure
	o.access = p.Verifier(&oidc.Config{
		SkipClientIDCheck:    true, // audiences are checked by checkAudience
		SkipIssuerCheck:      skipIss,
		SupportedSigningAlgs: asymmetricAlgs,
		Now:                  o.now,
	})
	if o.cfg.ClientID != "" {
		o.idTokens = p.Verifier(&oidc.Config{
			ClientID:             o.cfg.ClientID,
			SkipIssuerCheck:      skipIss,
			SupportedSigningAlgs: asymmetricAlgs,
			Now:                  o.now,
		})
	}
	o.provider = p
	return nil
}

// fetchIssuer reads the issuer from the discovery document of issuer.
func fetchIssuer(ctx context.Context, client *http.Client, issuer string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/.well-known/openid-configuration", nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("discover identity provider %s: %w", issuer, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("discover identity provider %s: %w", issuer, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("discover identity provider %s: HTTP %s", issuer, resp.Status)
	}
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("discover identity provider %s: %w", issuer, err)
	}
	return doc.Issuer, nil
}

// ready returns the verifiers, running discovery when it has not succeeded yet.
func (o *oidcVerifier) ready(ctx context.Context) (access, idTokens *oidc.IDTokenVerifier, err error) {
	if err := o.init(ctx); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errUnavailable, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.access, o.idTokens, nil
}

// endpoint returns the provider's OAuth endpoints (proxy mode).
func (o *oidcVerifier) endpoint(ctx context.Context) (*oidc.Provider, error) {
	if err := o.init(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", errUnavailable, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.provider, nil
}

// verify checks a bearer token: signature against the JWKS, exp, nbf,
// issuer (with Azure's quirks) and audience.
func (o *oidcVerifier) verify(ctx context.Context, raw string) (map[string]any, time.Time, error) {
	if strings.Count(raw, ".") != 2 {
		if o.cfg.Provider == ProviderGoogle {
			return nil, time.Time{}, invalid("malformed token: not a JWT; Google access tokens are opaque, send the Google ID token")
		}
		return nil, time.Time{}, invalid("malformed token: not a JWT (want three dot-separated parts)")
	}
	if err := checkAlg(raw); err != nil {
		return nil, time.Time{}, err
	}
	access, _, err := o.ready(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	return o.check(ctx, access, raw, o.audiences)
}

// verifyIDToken checks an ID token received from the provider's token
// endpoint in proxy mode (aud = OIDC_CLIENT_ID).
func (o *oidcVerifier) verifyIDToken(ctx context.Context, raw string) (map[string]any, error) {
	_, idTokens, err := o.ready(ctx)
	if err != nil {
		return nil, err
	}
	if idTokens == nil {
		return nil, errors.New("OIDC_CLIENT_ID is not set")
	}
	claims, _, err := o.check(ctx, idTokens, raw, nil)
	return claims, err
}

func (o *oidcVerifier) check(ctx context.Context, v *oidc.IDTokenVerifier, raw string, auds []string) (map[string]any, time.Time, error) {
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		return nil, time.Time{}, o.rejection(err, raw)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return nil, time.Time{}, invalid("malformed token: claims are not a JSON object")
	}
	if o.cfg.Provider == ProviderAzure {
		if err := o.checkAzureIssuer(tok.Issuer, str(claims, "tid")); err != nil {
			return nil, time.Time{}, err
		}
	}
	if err := checkAudience(claims, auds); err != nil {
		return nil, time.Time{}, err
	}
	return claims, tok.Expiry, nil
}

// rejection turns a go-oidc verification error into one the client may
// read. go-oidc's own texts are not passed on: they carry process internals
// (times printed with the monotonic clock reading "m=+0.01", Go type names,
// go-jose package prefixes). Claims are read from the unverified payload only
// to describe the failure, never to accept anything.
func (o *oidcVerifier) rejection(err error, raw string) error {
	var expired *oidc.TokenExpiredError
	if errors.As(err, &expired) {
		return invalid("token expired at %s", expired.Expiry.UTC().Format(time.RFC3339))
	}
	msg := err.Error()
	// go-oidc flattens its JWKS fetch error into text; an unreachable JWKS
	// is the provider's fault, not the token's.
	if strings.Contains(msg, "fetching keys") {
		return fmt.Errorf("%w: %v", errUnavailable, err)
	}
	claims := map[string]any{}
	if parts := strings.Split(raw, "."); len(parts) == 3 {
		if cb, err := b64.DecodeString(parts[1]); err == nil {
			if c, err := decodeClaims(cb); err == nil {
				claims = c
			}
		}
	}
	switch {
	case strings.Contains(msg, "nbf"):
		if nbf, ok, err := numericDate(claims, "nbf"); ok && err == nil {
			return invalid("token is not valid before %s", nbf.UTC().Format(time.RFC3339))
		}
		return invalid("token is not valid yet (nbf)")
	case strings.Contains(msg, "different provider"):
		return invalid("token issuer %q is not accepted; expected %q", str(claims, "iss"), o.cfg.Issuer)
	case strings.Contains(msg, "critical"):
		return invalid("token header lists critical extensions (crit) this server does not understand; the issuer must not mark extensions critical")
	case strings.Contains(msg, "unmarshal"):
		return invalid("malformed token: a registered claim (iss, sub, aud, exp, nbf, iat) has the wrong JSON type")
	case strings.Contains(msg, "malformed"):
		return invalid("malformed token: not a JWT the identity provider issued")
	case strings.Contains(msg, "signature"), strings.Contains(msg, "public key"), strings.Contains(msg, "verify"):
		return invalid("token signature is invalid: it was not signed by a key the identity provider %s publishes", o.cfg.Issuer)
	}
	return invalid("token is not valid for the identity provider %s", o.cfg.Issuer)
}

// checkAzureIssuer accepts the configured (or tenant-templated) v2 issuer
// and the v1 issuer https://sts.windows.net/<tenant>/, which Azure uses for
// access tokens of app registrations that ask for v1 tokens.
func (o *oidcVerifier) checkAzureIssuer(iss, tid string) error {
	var allowed []string
	tenant := ""
	if o.issuerTmpl != "" {
		if tid == "" {
			return invalid("token has no tenant id (tid), required by a multi-tenant Azure issuer")
		}
		tenant = tid
		allowed = append(allowed, strings.ReplaceAll(o.issuerTmpl, "{tenantid}", tid))
	} else {
		issuer := o.cfg.Issuer
		if o.azureIssuer != "" {
			issuer = o.azureIssuer
		}
		allowed = append(allowed, issuer)
		if u, err := url.Parse(issuer); err == nil {
			tenant, _, _ = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		}
	}
	if tenant != "" {
		allowed = append(allowed, "https://sts.windows.net/"+tenant+"/")
	}
	for _, a := range allowed {
		if iss == a {
			return nil
		}
	}
	return invalid("token issuer %q is not accepted; expected %q", iss, allowed[0])
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}

// checkAlg refuses "none" and HMAC algorithms before go-oidc sees the
// token, with a precise description.
func checkAlg(raw string) error {
	head, _, _ := strings.Cut(raw, ".")
	hb, err := b64.DecodeString(head)
	if err != nil {
		return invalid("malformed token: bad base64url encoding")
	}
	h, err := decodeHeader(hb)
	if err != nil {
		return err
	}
	for _, a := range asymmetricAlgs {
		if h.Alg == a {
			return nil
		}
	}
	return invalid("token algorithm %q is not accepted; the identity provider must sign with an asymmetric key (e.g. RS256, ES256)", h.Alg)
}
