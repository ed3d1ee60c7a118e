package httpauth

// identityFromClaims builds the caller's identity from verified claims.
// The username is preferred_username, with the usual fallbacks of providers
// that do not send it in access tokens.
func identityFromClaims(provider string, claims map[string]any) *Identity {
	id := &Identity{Subject: str(claims, "sub"), Claims: claims}
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
