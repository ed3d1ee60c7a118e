package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinoauth"
)

// TestCallerKeySeparatesTokens: with token exchange the caller's own token
// decides who Trino sees, so callers with the same headers but different
// tokens never share a transaction begun ahead; the key holds no token.
func TestCallerKeySeparatesTokens(t *testing.T) {
	o := &requestOptions{user: "svc", tags: "sqlmcp,user:alice", info: `{"user":"alice"}`}
	tokens := []string{"", "tok-A", "tok-B", "tok-A ", "TOK-A", strings.Repeat("x", 10000)}
	seen := map[string]string{}
	for _, tok := range tokens {
		ctx := context.Background()
		if tok != "" {
			ctx = trinoauth.WithSubjectToken(ctx, tok)
		}
		k := callerKey(ctx, o)
		if tok != "" && strings.Contains(k, tok) {
			t.Errorf("the key holds the token %q", tok)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("tokens %q and %q share a key", other, tok)
		}
		seen[k] = tok
		if again := callerKey(ctx, o); again != k {
			t.Errorf("token %q: the key changed between two calls", tok)
		}
	}
}
