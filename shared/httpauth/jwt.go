package httpauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// accessTokenType is the JOSE "typ" of the access tokens this server issues
// in proxy mode (RFC 9068), so that no other HS256 JWT passes as one.
const accessTokenType = "at+jwt"

// nbfLeeway tolerates clock skew between the token issuer and this host.
const nbfLeeway = time.Minute

var b64 = base64.RawURLEncoding

// tokenError is a token rejection; its text goes to the client in
// error_description, so it never contains the token.
type tokenError struct{ msg string }

func (e *tokenError) Error() string { return e.msg }

func invalid(format string, args ...any) error {
	return &tokenError{msg: fmt.Sprintf(format, args...)}
}

type jwtHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid"`
}

// splitJWT decodes the header and claims of a compact JWS without verifying it.
func splitJWT(raw string) (h jwtHeader, claims map[string]any, signingInput string, sig []byte, err error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return h, nil, "", nil, invalid("malformed token: not a JWT (want three dot-separated parts)")
	}
	hb, err1 := b64.DecodeString(parts[0])
	cb, err2 := b64.DecodeString(parts[1])
	sig, err3 := b64.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return h, nil, "", nil, invalid("malformed token: bad base64url encoding")
	}
	if h, err = decodeHeader(hb); err != nil {
		return h, nil, "", nil, err
	}
	claims, err = decodeClaims(cb)
	if err != nil {
		return h, nil, "", nil, err
	}
	return h, claims, parts[0] + "." + parts[1], sig, nil
}

// decodeHeader reads a JOSE header and refuses one with a "crit" parameter:
// this verifier implements no JWS extension, and RFC 7515 §4.1.11 requires
// rejecting a JWS whose critical extensions are not understood. Any "crit"
// is refused, whatever its value (an empty list is itself invalid, and
// go-jose would accept "b64", an extension JWTs must not use).
func decodeHeader(b []byte) (jwtHeader, error) {
	var h jwtHeader
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil || fields == nil || json.Unmarshal(b, &h) != nil {
		return h, invalid("malformed token: header is not a JSON object")
	}
	if _, ok := fields["crit"]; ok {
		return h, invalid("token header lists critical extensions (crit) this server does not understand; the issuer must not mark extensions critical")
	}
	return h, nil
}

func decodeClaims(b []byte) (map[string]any, error) {
	var claims map[string]any
	if json.Unmarshal(b, &claims) != nil || claims == nil {
		return nil, invalid("malformed token: claims are not a JSON object")
	}
	return claims, nil
}

// numericDate reads a JWT NumericDate claim.
func numericDate(claims map[string]any, name string) (time.Time, bool, error) {
	v, ok := claims[name]
	if !ok {
		return time.Time{}, false, nil
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	default:
		return time.Time{}, true, invalid("claim %q is not a number", name)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}, true, invalid("claim %q is not a number", name)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

// audiences reads "aud", a string or an array of strings.
func audiences(claims map[string]any) []string {
	switch a := claims["aud"].(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, v := range a {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func str(claims map[string]any, name string) string {
	s, _ := claims[name].(string)
	return s
}

// checkAudience requires one of want in the token's aud (no check when want is empty).
func checkAudience(claims map[string]any, want []string) error {
	if len(want) == 0 {
		return nil
	}
	got := audiences(claims)
	for _, a := range got {
		if slices.Contains(want, a) {
			return nil
		}
	}
	if len(got) == 0 {
		return invalid("token has no audience (aud); expected %q", want[0])
	}
	return invalid("token audience %q is not accepted; expected %q", strings.Join(got, ","), want[0])
}

// hmacVerifier verifies HS256 JWTs: OAUTH_PROVIDER=hmac tokens, and in proxy
// mode the access tokens this server issued.
type hmacVerifier struct {
	key       []byte
	issuer    string   // required iss when set
	audiences []string // one required in aud when set
	typ       string   // required JOSE typ when set
	own       bool     // tokens issued by this server in proxy mode
	now       func() time.Time
}

// verify checks signature, alg, exp (required), nbf, iss and aud and returns
// the claims and expiry.
func (v *hmacVerifier) verify(raw string) (map[string]any, time.Time, error) {
	h, claims, input, sig, err := splitJWT(raw)
	if err != nil {
		return nil, time.Time{}, err
	}
	// Only HS256 is accepted: "none", other HMAC sizes and asymmetric
	// algorithms (which invite key-confusion attacks) are refused outright.
	if h.Alg != "HS256" {
		return nil, time.Time{}, invalid("token algorithm %q is not accepted; expected HS256", h.Alg)
	}
	if v.typ != "" && !strings.EqualFold(h.Typ, v.typ) {
		return nil, time.Time{}, invalid("token type %q is not accepted; expected %q", h.Typ, v.typ)
	}
	mac := hmac.New(sha256.New, v.key)
	mac.Write([]byte(input))
	if !hmac.Equal(mac.Sum(nil), sig) {
		return nil, time.Time{}, invalid("token signature is invalid")
	}
	exp, err := checkTimes(claims, v.now())
	if err != nil {
		return nil, time.Time{}, err
	}
	if v.issuer != "" {
		if iss := str(claims, "iss"); iss != v.issuer {
			return nil, time.Time{}, invalid("token issuer %q is not accepted; expected %q", iss, v.issuer)
		}
	}
	if err := checkAudience(claims, v.audiences); err != nil {
		return nil, time.Time{}, err
	}
	return claims, exp, nil
}

// checkTimes requires exp in the future and nbf, when present, in the past.
func checkTimes(claims map[string]any, now time.Time) (time.Time, error) {
	exp, ok, err := numericDate(claims, "exp")
	if err != nil {
		return exp, err
	}
	if !ok {
		return exp, invalid("token has no expiry (exp)")
	}
	if !now.Before(exp) {
		return exp, invalid("token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	nbf, ok, err := numericDate(claims, "nbf")
	if err != nil {
		return exp, err
	}
	if ok && now.Add(nbfLeeway).Before(nbf) {
		return exp, invalid("token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	// iat is informational, but a malformed one means a malformed token
	// (go-oidc refuses it too).
	if _, _, err := numericDate(claims, "iat"); err != nil {
		return exp, err
	}
	return exp, nil
}

// signHS256 returns a compact HS256 JWT over claims.
func signHS256(key []byte, typ string, claims map[string]any) (string, error) {
	hdr := map[string]string{"alg": "HS256", "typ": typ}
	hb, err := json.Marshal(hdr)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(hb) + "." + b64.EncodeToString(cb)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(input))
	return input + "." + b64.EncodeToString(mac.Sum(nil)), nil
}

// deriveKey gives each use of JWT_SECRET its own key, so that a value made
// for one purpose (state, code, access token) is never valid as another.
func deriveKey(secret []byte, purpose string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("mcpfleet/httpauth/" + purpose))
	return mac.Sum(nil)
}
