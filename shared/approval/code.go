package approval

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/state"
)

// Binding is what a confirmation code is bound to: the call it approves.
type Binding struct {
	Tool   string
	Target string // the back end the call goes to
	// Caller is who was shown the preview: a code is redeemed only by the
	// same caller, so a code leaked to or guessed by another identity
	// approves nothing.
	Caller Caller
	// Arguments are the call's arguments; confirm and dryRun are ignored,
	// keys are sorted and numbers normalised (8080 == 8080.0 == 8.08e3).
	Arguments map[string]any
	// Precondition is a fingerprint of the state the preview showed that must
	// still hold when the approved call runs ("" when nothing is checked).
	Precondition string
	// Purpose separates codes issued for different steps (the pipeline uses
	// "confirm" for confirmation codes and "elicit" for the request state of
	// an input-required result), so one cannot stand in for the other.
	Purpose string
}

// Caller is who makes a call, compared field by field (never as a
// formatted string, which a subject holding " user=alice" could spell).
type Caller struct {
	Kind    string // CallerOAuth, CallerLocal or CallerAnonymous
	Issuer  string // OAuth: the token's iss, exactly as sent
	Subject string // OAuth: sub, unique within its issuer; local: the OS user
}

// Caller kinds.
const (
	CallerOAuth     = "oauth"     // a verified bearer token
	CallerLocal     = "local"     // stdio: the user who started the process
	CallerAnonymous = "anonymous" // HTTP without OAuth
)

// key is an injective encoding of c: each field length-prefixed, so no two
// callers share a key whatever bytes their fields hold.
func (c Caller) key() string {
	var b strings.Builder
	for _, f := range []string{c.Kind, c.Issuer, c.Subject} {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
	}
	return b.String()
}

// check refuses a caller no code may be bound to: an OAuth identity
// without a subject would share its codes with every other such token.
func (c Caller) check() error {
	switch {
	case c.Kind == "":
		return errors.New("the caller is unknown, so no confirmation code can be bound to it; this is a bug in the server, report it")
	case c.Kind == CallerOAuth && strings.TrimSpace(c.Subject) == "":
		return errors.New("the caller's token names no subject (sub), so no confirmation code can be bound to it; ask the identity provider to include sub")
	}
	return nil
}

// Reason says why a confirmation code was refused.
type Reason string

// Reasons.
const (
	Malformed      Reason = "malformed"
	Forged         Reason = "forged"
	OtherTool      Reason = "other tool"
	OtherTarget    Reason = "other target"
	OtherArguments Reason = "other arguments"
	OtherCaller    Reason = "other caller"
	Expired        Reason = "expired"
	Used           Reason = "used"
	OtherPurpose   Reason = "other purpose"
	// Reset: the shared store lost its records after the code was issued.
	Reset Reason = "store reset"
)

// CodeError is a refused confirmation code; its message says which check
// failed and what to do.
type CodeError struct {
	Reason Reason
	Detail string
}

func (e *CodeError) Error() string {
	const again = "; call the tool again without confirm to get a fresh preview and code, show the preview to the user, and confirm with the new code"
	switch e.Reason {
	case Malformed:
		return "the confirmation code is not a code this server issued (malformed or truncated)" + again
	case Forged:
		return "the confirmation code's signature does not match: it was altered, forged, or signed with another MCP_APPROVAL_SECRET" + again
	case OtherTool:
		return "the confirmation code was issued for another tool (" + e.Detail + ")" + again
	case OtherTarget:
		return "the confirmation code was issued for another back end than this call's target" + again
	case OtherArguments:
		return "the confirmation code was issued for other arguments than this call's: a code approves exactly the previewed call" + again
	case OtherCaller:
		return "the confirmation code was issued to another caller: a code approves only the call of the identity that was shown the preview" + again
	case Expired:
		return "the confirmation code expired " + e.Detail + " (codes are valid for MCP_APPROVAL_TIMEOUT)" + again
	case OtherPurpose:
		return "the code was issued for another step (" + e.Detail + "), not as this call's confirmation" + again
	case Used:
		return "the confirmation code has already been used; a code works once" + again
	case Reset:
		return e.Detail + again
	}
	return "the confirmation code was refused" + again
}

// LedgerError is a code that could not be recorded as used: it is refused,
// since whether it ran before cannot be known.
type LedgerError struct {
	Where string // the ledger (a file path)
	Err   error
}

func (e *LedgerError) Error() string {
	return "the confirmation code was not accepted, as it could not be checked against and recorded in the ledger of used codes (" +
		e.Where + ", MCP_APPROVAL_LEDGER): " + e.Err.Error() + "; nothing was changed"
}

// LedgerHint says what the operator does about a LedgerError.
const LedgerHint = "Ask the operator to make the ledger readable and writable by the server's user, or to set MCP_APPROVAL_LEDGER to a writable file " +
	"(a new, empty ledger lets codes used before run again until they expire: change MCP_APPROVAL_SECRET with it), then get a fresh code"

func (e *LedgerError) Unwrap() error { return e.Err }

// Codes issues and redeems confirmation codes: HMAC-SHA256 signed, bound to
// a Binding, valid for ttl, and single use wherever the ledger is seen.
type Codes struct {
	key  []byte
	ttl  time.Duration
	now  func() time.Time
	used state.Ledger
}

// NewCodes returns a code issuer signing with key; codes live for ttl and
// are used once in used: a ledger every process that holds key consults
// (nil: this process only, right only for a key no other process has).
func NewCodes(key []byte, ttl time.Duration, used state.Ledger) *Codes {
	if used == nil {
		used = state.NewMemory()
	}
	return &Codes{key: bytes.Clone(key), ttl: ttl, now: time.Now, used: used}
}

// codePrefix versions the format.
const codePrefix = "mcpc1."

// claims is the signed content of a code. Tool is in clear so that a code
// used on the wrong tool can say which tool it belongs to.
type claims struct {
	Tool   string `json:"t"`
	Target string `json:"g"` // digest
	Args   string `json:"a"` // digest of the canonical arguments
	Caller string `json:"c"` // digest
	Pre    string `json:"p,omitempty"`
	Use    string `json:"u,omitempty"` // Binding.Purpose
	Exp    int64  `json:"x"`           // unix ms
	// Iat is when the code was issued (unix ms) and Gen the generation of
	// the ledger its issuer knew (state.Stamp): a ledger that lost its
	// records since refuses it. Codes of older builds lack them.
	Iat   int64  `json:"i,omitempty"`
	Gen   int64  `json:"e,omitempty"`
	Nonce string `json:"n"`
}

// Claims are what a redeemed code carried.
type Claims struct {
	// Precondition is the digest of the previewed Binding.Precondition ("" when none).
	Precondition string
	Expires      time.Time
}

// Issue returns a code approving exactly b, valid until now+ttl.
func (c *Codes) Issue(b Binding) (string, error) {
	if err := b.Caller.check(); err != nil {
		return "", err
	}
	canon, err := CanonicalArguments(b.Arguments)
	if err != nil {
		return "", err
	}
	n := make([]byte, 12)
	rand.Read(n)
	now := c.now()
	cl := claims{
		Tool: b.Tool, Target: digest(b.Target), Args: digest(string(canon)), Caller: digest(b.Caller.key()),
		Exp: now.Add(c.ttl).UnixMilli(), Iat: now.UnixMilli(), Gen: state.Generation(c.used), Nonce: hex.EncodeToString(n), Use: b.Purpose,
	}
	if b.Precondition != "" {
		cl.Pre = digest(b.Precondition)
	}
	payload, _ := json.Marshal(cl)
	p := base64.RawURLEncoding.EncodeToString(payload)
	return codePrefix + p + "." + base64.RawURLEncoding.EncodeToString(c.sign(p)), nil
}

// Redeem checks code against b and, when it is valid, marks it used in the
// ledger, so that of any number of concurrent redemptions of one code, in
// any process sharing the ledger, exactly one succeeds. The returned claims
// let the caller compare the precondition. A refused code is a *CodeError,
// or a *LedgerError when the ledger could not be read or written.
func (c *Codes) Redeem(ctx context.Context, code string, b Binding) (Claims, error) {
	if err := b.Caller.check(); err != nil {
		return Claims{}, err
	}
	cl, err := c.verify(code)
	if err != nil {
		return Claims{}, err
	}
	if cl.Use != b.Purpose {
		return Claims{}, &CodeError{Reason: OtherPurpose, Detail: cl.Use}
	}
	if cl.Tool != b.Tool {
		return Claims{}, &CodeError{Reason: OtherTool, Detail: cl.Tool}
	}
	if cl.Target != digest(b.Target) {
		return Claims{}, &CodeError{Reason: OtherTarget}
	}
	if !hmac.Equal([]byte(cl.Caller), []byte(digest(b.Caller.key()))) {
		return Claims{}, &CodeError{Reason: OtherCaller}
	}
	canon, err := CanonicalArguments(b.Arguments)
	if err != nil {
		return Claims{}, err
	}
	if cl.Args != digest(string(canon)) {
		return Claims{}, &CodeError{Reason: OtherArguments}
	}
	now := c.now()
	exp := time.UnixMilli(cl.Exp)
	if !now.Before(exp) {
		return Claims{}, &CodeError{Reason: Expired, Detail: "at " + exp.UTC().Format(time.RFC3339)}
	}
	issued := time.UnixMilli(cl.Iat)
	if cl.Iat == 0 {
		// A code of an older build: issued one lifetime before it expires.
		issued = exp.Add(-c.ttl)
	}
	first, err := c.used.MarkUsed(ctx, "code:"+cl.Nonce, state.Stamp{At: issued, Generation: cl.Gen}, exp)
	var reset *state.ResetError
	if errors.As(err, &reset) {
		return Claims{}, &CodeError{Reason: Reset, Detail: err.Error()}
	}
	if err != nil {
		return Claims{}, &LedgerError{Where: c.used.Where(), Err: err}
	}
	if !first {
		return Claims{}, &CodeError{Reason: Used}
	}
	return Claims{Precondition: cl.Pre, Expires: exp}, nil
}

// PreconditionMatches reports whether the precondition a code carried
// (Claims.Precondition) is the current one.
func PreconditionMatches(claimed, current string) bool {
	if claimed == "" {
		return true
	}
	return hmac.Equal([]byte(claimed), []byte(digest(current)))
}

func (c *Codes) verify(code string) (claims, error) {
	code = strings.TrimSpace(code)
	rest, ok := strings.CutPrefix(code, codePrefix)
	if !ok {
		return claims{}, &CodeError{Reason: Malformed}
	}
	p, sig, ok := strings.Cut(rest, ".")
	if !ok || p == "" || sig == "" {
		return claims{}, &CodeError{Reason: Malformed}
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return claims{}, &CodeError{Reason: Malformed}
	}
	if !hmac.Equal(got, c.sign(p)) {
		return claims{}, &CodeError{Reason: Forged}
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return claims{}, &CodeError{Reason: Malformed}
	}
	var cl claims
	if err := json.Unmarshal(payload, &cl); err != nil || cl.Nonce == "" {
		return claims{}, &CodeError{Reason: Malformed}
	}
	return cl, nil
}

func (c *Codes) sign(payload string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(codePrefix))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Ignored are the argument names that steer the pipeline rather than the
// call, so they are not part of what a code approves.
var Ignored = []string{"confirm", "dryRun"}

// CanonicalArguments renders args as canonical JSON: the Ignored keys
// dropped at the top level, object keys sorted, and every number written
// as its exact value, so that equal calls have equal bytes however the
// client spelled them.
func CanonicalArguments(args map[string]any) ([]byte, error) {
	top := make(map[string]any, len(args))
	for k, v := range args {
		if slices.Contains(Ignored, k) {
			continue
		}
		top[k] = v
	}
	var b bytes.Buffer
	if err := canon(&b, top); err != nil {
		return nil, fmt.Errorf("canonicalise arguments: %w", err)
	}
	return b.Bytes(), nil
}

func canon(b *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool, string:
		enc, _ := json.Marshal(t)
		b.Write(enc)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			enc, _ := json.Marshal(k)
			b.Write(enc)
			b.WriteByte(':')
			if err := canon(b, t[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canon(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case json.Number:
		r, ok := new(big.Rat).SetString(string(t))
		if !ok {
			return fmt.Errorf("number %q", t)
		}
		b.WriteString("n:" + r.RatString())
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("number %v", t)
		}
		b.WriteString("n:" + new(big.Rat).SetFloat64(t).RatString())
	case float32:
		return canon(b, float64(t))
	case int:
		b.WriteString("n:" + big.NewRat(int64(t), 1).RatString())
	case int64:
		b.WriteString("n:" + big.NewRat(t, 1).RatString())
	default:
		// Typed values (structs) from in-process callers: their JSON form.
		enc, err := json.Marshal(t)
		if err != nil {
			return err
		}
		var back any
		d := json.NewDecoder(bytes.NewReader(enc))
		d.UseNumber()
		if err := d.Decode(&back); err != nil {
			return err
		}
		return canon(b, back)
	}
	return nil
}
