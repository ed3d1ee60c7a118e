package httpauth

import (
	"context"
	"strconv"
	"strings"
)

// identityFromClaims builds the caller's identity from verified claims.
// The username is preferred_username, with the usual fallbacks of providers
// that do not send it in access tokens.
func identityFromClaims(provider string, claims map[string]any) *Identity {
	id := &Identity{Issuer: str(claims, "iss"), Subject: str(claims, "sub"), Claims: claims}
	id.Username = str(claims, "preferred_username")
	if id.Username == "" {
		switch provider {
		case ProviderAzure:
			// v1 tokens carry upn (or unique_name for guests) instead.
			id.Username = str(claims, "upn")
			if id.Username == "" {
				id.Username = str(claims, "unique_name")
			}
		case ProviderOkta:
			// Okta access tokens put the user's login in sub.
			id.Username = str(claims, "sub")
		}
	}
	id.Email = str(claims, "email")
	if v, ok := claims["email_verified"].(bool); ok && !v {
		// An unverified address must not be taken for the caller's own.
		id.Email = ""
	}
	return id
}

// Principal is who owns a session or a task: the token's issuer and
// subject, compared as values. A subject is unique only within its issuer,
// and neither field is ever formatted into one string, so no crafted
// subject (`alice user=alice`, one ending in the issuer) can equal another
// caller's principal. The zero Principal is the caller without OAuth.
type Principal struct {
	Issuer  string
	Subject string
}

// Principal returns the owner key of id; a nil id is the zero Principal.
func (id *Identity) Principal() Principal {
	if id == nil {
		return Principal{}
	}
	return Principal{Issuer: id.Issuer, Subject: id.Subject}
}

// PrincipalFromContext returns the principal of the verified caller in ctx,
// or the zero Principal when there is none (OAuth off, stdio).
func PrincipalFromContext(ctx context.Context) Principal {
	id, _ := IdentityFromContext(ctx)
	return id.Principal()
}

// Owner is the principal as bytes for a MAC input (session ids): the
// issuer is length-prefixed, so that no other issuer and subject produce
// the same bytes. Compare principals with Principal, never as strings.
func (id *Identity) Owner() string {
	return id.Principal().key()
}

func (p Principal) key() string {
	return strconv.Itoa(len(p.Issuer)) + ":" + p.Issuer + p.Subject
}

// checkIdentity refuses an identity without a subject, or without the
// field the configuration requires.
func checkIdentity(id *Identity, required string) error {
	if strings.TrimSpace(id.Subject) == "" {
		return invalid("token has no subject (sub); the identity provider must name the caller in sub")
	}
	var have string
	var claim string
	switch required {
	case "":
		return nil
	case IdentityUsername:
		have, claim = id.Username, "preferred_username"
	case IdentityEmail:
		have, claim = id.Email, "email (verified)"
	case IdentitySubject:
		have, claim = id.Subject, "sub"
	}
	if strings.TrimSpace(have) == "" {
		return invalid("token has no %s (claim %s), which this server needs to act as the caller; ask the identity provider to include it", required, claim)
	}
	return nil
}
