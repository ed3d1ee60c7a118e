package trinotest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// JWTAuth makes the engine authenticate requests with a Bearer JWT the way
// Trino's JWT authenticator does (http-server.authentication.type=JWT):
//
//	http-server.authentication.jwt.key-file=<JWKSURL>
//	http-server.authentication.jwt.required-issuer=<Issuer>
//	http-server.authentication.jwt.required-audience=<Audience>
//	http-server.authentication.jwt.principal-field=<PrincipalField>
//
// Only RS256 and ES256 signatures from the key set are accepted ("none",
// HMAC and keys not in the set are refused); exp and nbf are checked when
// present, as Trino's parser does. A refused request gets 401 with
// WWW-Authenticate: Bearer, and the error names no token content.
type JWTAuth struct {
	// JWKSURL is where the JSON Web Key Set is fetched (the IdP's jwks_uri).
	JWKSURL string
	// HTTPClient fetches the key set (default http.DefaultClient).
	HTTPClient *http.Client
	// Issuer, when set, must equal the token's iss.
	Issuer string
	// Audience, when set, must be one of the token's aud values.
	Audience string
	// PrincipalField is the claim naming the principal (default "sub").
	PrincipalField string
	// MaxTokenBytes refuses longer tokens (default 8192, the header size
	// Trino's HTTP server accepts by default).
	MaxTokenBytes int
	// Now is the clock (default time.Now).
	Now func() time.Time

	// External, when set, turns on Trino's external (browser)
	// authentication: a request without credentials is answered 401 with
	// Bearer x_redirect_server="…", x_token_server="…"; a GET of the
	// redirect URL (the browser step, ?user=<name>) logs that user in, and
	// External mints the token the token server then hands out.
	External func(user string) (string, error)

	mu   sync.Mutex
	keys map[string]crypto.PublicKey
	// external logins by id
	logins map[string]*externalLogin
}

type externalLogin struct {
	token, err string
	done       chan struct{}
	created    time.Time
}

// WithJWTAuth authenticates requests with Bearer JWTs (see JWTAuth); it
// implies TLS, as Trino authenticates only over HTTPS.
func WithJWTAuth(a *JWTAuth) Option {
	return func(o *Options) {
		o.TLS = true
		o.JWT = a
	}
}

func (a *JWTAuth) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// errJWT is why a token was refused; its text never quotes the token.
type errJWT string

func (e errJWT) Error() string { return string(e) }

// authenticate returns the principal of the request's Bearer token, or
// answers 401.
func (a *JWTAuth) authenticate(s *Server, w http.ResponseWriter, r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(h, " ")
	if h == "" || !strings.EqualFold(scheme, "Bearer") {
		a.challenge(s, w, "Unauthorized: no Bearer token")
		return "", false
	}
	principal, err := a.Validate(strings.TrimSpace(tok))
	if err != nil {
		a.challenge(s, w, "Unauthorized: "+err.Error())
		return "", false
	}
	return principal, true
}

func (a *JWTAuth) challenge(s *Server, w http.ResponseWriter, msg string) {
	if a.External != nil {
		id := rand.Text()
		a.mu.Lock()
		if a.logins == nil {
			a.logins = map[string]*externalLogin{}
		}
		for k, l := range a.logins { // bounded: drop logins nobody finished
			if time.Since(l.created) > 10*time.Minute {
				delete(a.logins, k)
			}
		}
		a.logins[id] = &externalLogin{done: make(chan struct{}), created: time.Now()}
		a.mu.Unlock()
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer x_redirect_server="%s/oauth2/token/initiate/%s", x_token_server="%s/oauth2/token/%s"`, s.URL(), id, s.URL(), id))
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer realm="Trino"`)
	}
	http.Error(w, msg, http.StatusUnauthorized)
}

// serveExternal answers the external authentication endpoints; it reports
// whether r was one of them.
func (a *JWTAuth) serveExternal(w http.ResponseWriter, r *http.Request) bool {
	if a.External == nil || !strings.HasPrefix(r.URL.Path, "/oauth2/token/") {
		return false
	}
	rest := strings.TrimPrefix(r.URL.Path, "/oauth2/token/")
	initiate := strings.HasPrefix(rest, "initiate/")
	id := strings.TrimPrefix(rest, "initiate/")
	a.mu.Lock()
	l := a.logins[id]
	a.mu.Unlock()
	if l == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown or finished authentication"})
		return true
	}
	switch {
	case initiate && r.Method == http.MethodGet:
		// The browser step: the user signs in (here: ?user=<name>).
		user := r.URL.Query().Get("user")
		a.mu.Lock()
		select {
		case <-l.done:
		default:
			if user == "" {
				l.err = "no user signed in"
			} else if tok, err := a.External(user); err != nil {
				l.err = "sign-in failed"
			} else {
				l.token = tok
			}
			close(l.done)
		}
		a.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "Signed in; return to your terminal.")
	case !initiate && r.Method == http.MethodGet:
		// Like Trino, hold the poll for a while, then send nextUri again.
		select {
		case <-l.done:
		case <-time.After(500 * time.Millisecond):
		case <-r.Context().Done():
			return true
		}
		a.mu.Lock()
		tok, msg := l.token, l.err
		a.mu.Unlock()
		select {
		case <-l.done:
			if msg != "" {
				writeJSON(w, http.StatusOK, map[string]string{"error": msg})
			} else {
				writeJSON(w, http.StatusOK, map[string]string{"token": tok})
			}
		default:
			writeJSON(w, http.StatusOK, map[string]string{"nextUri": "https://" + r.Host + r.URL.Path})
		}
	case !initiate && r.Method == http.MethodDelete:
		a.mu.Lock()
		delete(a.logins, id)
		a.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
	}
	return true
}

var b64url = base64.RawURLEncoding

// Validate checks token as Trino's JWT authenticator does and returns its
// principal.
func (a *JWTAuth) Validate(token string) (string, error) {
	max := a.MaxTokenBytes
	if max <= 0 {
		max = 8192
	}
	if len(token) > max {
		return "", errJWT("token too large")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", errJWT("malformed JWT")
	}
	var hdr struct {
		Alg  string   `json:"alg"`
		Kid  string   `json:"kid"`
		Crit []string `json:"crit"`
	}
	hb, err := b64url.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &hdr) != nil {
		return "", errJWT("malformed JWT header")
	}
	if len(hdr.Crit) > 0 {
		return "", errJWT("unsupported critical JWT header")
	}
	sig, err := b64url.DecodeString(parts[2])
	if err != nil || len(sig) == 0 {
		return "", errJWT("JWT is not signed")
	}
	key, err := a.key(hdr.Kid)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := key.(type) {
	case *rsa.PublicKey:
		if hdr.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) != nil {
			return "", errJWT("JWT signature does not match")
		}
	case *ecdsa.PublicKey:
		if hdr.Alg != "ES256" || len(sig) != 64 ||
			!ecdsa.Verify(k, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return "", errJWT("JWT signature does not match")
		}
	default:
		return "", errJWT("JWT signature does not match")
	}
	var claims map[string]any
	cb, err := b64url.DecodeString(parts[1])
	if err != nil || json.Unmarshal(cb, &claims) != nil {
		return "", errJWT("malformed JWT claims")
	}
	now := a.now()
	if exp, ok := claims["exp"]; ok {
		f, isNum := exp.(float64)
		if !isNum || !now.Before(time.Unix(int64(f), 0)) {
			return "", errJWT("JWT expired")
		}
	}
	if nbf, ok := claims["nbf"]; ok {
		f, isNum := nbf.(float64)
		if !isNum || now.Before(time.Unix(int64(f), 0)) {
			return "", errJWT("JWT not yet valid")
		}
	}
	if a.Issuer != "" {
		if iss, _ := claims["iss"].(string); iss != a.Issuer {
			return "", errJWT("JWT issuer is not the required issuer")
		}
	}
	if a.Audience != "" && !hasAudience(claims["aud"], a.Audience) {
		return "", errJWT("JWT audience is not the required audience")
	}
	field := a.PrincipalField
	if field == "" {
		field = "sub"
	}
	p, _ := claims[field].(string)
	if strings.TrimSpace(p) == "" {
		return "", errJWT("JWT has no principal field " + field)
	}
	return p, nil
}

func hasAudience(v any, want string) bool {
	switch aud := v.(type) {
	case string:
		return aud == want
	case []any:
		return slices.ContainsFunc(aud, func(x any) bool { s, _ := x.(string); return s == want })
	}
	return false
}

// key returns the key kid, fetching the key set when it is unknown (a
// rotation), at most once per call.
func (a *JWTAuth) key(kid string) (crypto.PublicKey, error) {
	a.mu.Lock()
	k, ok := a.keys[kid]
	a.mu.Unlock()
	if ok {
		return k, nil
	}
	if err := a.fetchKeys(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if k, ok := a.keys[kid]; ok {
		return k, nil
	}
	return nil, errJWT("JWT key is not in the key set")
}

func (a *JWTAuth) fetchKeys() error {
	c := a.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Get(a.JWKSURL)
	if err != nil {
		return errJWT("fetch the JWKS: " + err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errJWT(fmt.Sprintf("fetch the JWKS: HTTP %d", resp.StatusCode))
	}
	var set struct {
		Keys []struct {
			Kty, Kid, Crv, N, E, X, Y string
		} `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return errJWT("read the JWKS: " + err.Error())
	}
	keys := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		switch k.Kty {
		case "RSA":
			n, err1 := b64url.DecodeString(k.N)
			e, err2 := b64url.DecodeString(k.E)
			if err1 != nil || err2 != nil {
				continue
			}
			keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		case "EC":
			x, err1 := b64url.DecodeString(k.X)
			y, err2 := b64url.DecodeString(k.Y)
			if err1 != nil || err2 != nil || k.Crv != "P-256" {
				continue
			}
			keys[k.Kid] = &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		}
	}
	if len(keys) == 0 {
		return errors.New("the JWKS has no usable key")
	}
	a.mu.Lock()
	a.keys = keys
	a.mu.Unlock()
	return nil
}
