package trinotest

import (
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
)

// The identity tests' audiences: tokens the MCP server validates are for
// MCPAudience; Trino (the engine of StartIdentity) accepts only
// TrinoAudience.
const (
	MCPAudience   = "https://mcp.example.com/mcp"
	TrinoAudience = "trino"
)

// ExchangeClient and ExchangeSecret are sqlmcp's confidential client at
// the provider of StartIdentity, allowed to exchange for TrinoAudience.
const (
	ExchangeClient = "sqlmcp"
	ExchangeSecret = "exchange-secret-e2e"
)

// IdentityRules is the access-control file of the identity tests: alice
// reads all of sales.public; bob only customers, the French ones and his
// own row, with email masked and balance hidden; nobody else reads
// anything.
const IdentityRules = `{
  "catalogs": [{"user": "alice|bob", "catalog": "sales", "allow": "read-only"},
               {"catalog": ".*", "allow": "none"}],
  "tables": [
    {"user": "alice", "catalog": "sales", "schema": "public", "table": ".*", "privileges": ["SELECT"]},
    {"user": "bob", "catalog": "sales", "schema": "public", "table": "customers", "privileges": ["SELECT"],
     "filter": "country = 'FR' OR name = current_user",
     "columns": [{"name": "email", "mask": "CASE WHEN email IS NULL THEN NULL ELSE '***' END"},
                 {"name": "balance", "allow": false}]}
  ]
}`

// Identity is Trino's side of "querying as yourself": the test identity
// provider and an engine that validates its JWTs as Trino's JWT
// authenticator does (JWKS, issuer, TrinoAudience, principal field
// preferred_username) and enforces IdentityRules.
type Identity struct {
	IdP    *idptest.IdP
	Engine *Server
}

// StartIdentity starts the provider with opts, registers ExchangeClient
// allowed to exchange tokens for TrinoAudience (RFC 8693), and starts the
// engine (TLS, no large table). Both stop when the test ends.
func StartIdentity(t testing.TB, opts idptest.Options) *Identity {
	t.Helper()
	idp := idptest.New(t, opts)
	idp.AddClient(idptest.Client{ID: ExchangeClient, Secret: ExchangeSecret})
	idp.AllowExchange(ExchangeClient, TrinoAudience)
	rules, err := ParseAccessRules([]byte(IdentityRules))
	if err != nil {
		t.Fatal(err)
	}
	eng := Start(t, WithLargeTableRows(-1), WithAccessRules(rules),
		WithJWTAuth(&JWTAuth{
			JWKSURL: idp.URL + "/jwks", Issuer: idp.Issuer(), Audience: TrinoAudience,
			PrincipalField: "preferred_username",
		}))
	return &Identity{IdP: idp, Engine: eng}
}

// MCPToken is a provider token for MCPAudience (what an MCP client
// presents to sqlmcp in native mode) for user: sub "sub-<user>",
// preferred_username user, email user@example.com.
func (i *Identity) MCPToken(user string) string {
	c := i.IdP.Claims(MCPAudience)
	c["sub"], c["preferred_username"], c["email"] = "sub-"+user, user, user+"@example.com"
	return i.IdP.Sign(c)
}
