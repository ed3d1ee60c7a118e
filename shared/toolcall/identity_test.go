package toolcall_test

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// TestCodeBoundToIssuerAndSubject: alice's code, leaked to a caller whose
// token is crafted to read like hers, deletes nothing. Codes are bound to
// (issuer, subject) as values; the formatted "oauth:<sub> user=<name>" of
// before let sub "alice user=alice" redeem it. Audit records carry issuer
// and subject as fields of their own.
func TestCodeBoundToIssuerAndSubject(t *testing.T) {
	const iss = "https://idp.example.com/realms/main"
	alice := &httpauth.Identity{Issuer: iss, Subject: "alice", Username: "alice"}
	hostile := []struct {
		name string
		id   *httpauth.Identity
	}{
		{"subject with a space and user=", &httpauth.Identity{Issuer: iss, Subject: "alice user=alice"}},
		{"subject with user= and the same user name", &httpauth.Identity{Issuer: iss, Subject: "alice user=alice", Username: "alice"}},
		{"subject with email=", &httpauth.Identity{Issuer: iss, Subject: "alice email=alice@example.com"}},
		{"subject spelled as the old identity", &httpauth.Identity{Issuer: iss, Subject: "oauth:alice user=alice"}},
		{"other subject with alice's user name", &httpauth.Identity{Issuer: iss, Subject: "bob", Username: "alice"}},
		{"subject quoted", &httpauth.Identity{Issuer: iss, Subject: `"alice"`, Username: "alice"}},
		{"subject with a trailing space", &httpauth.Identity{Issuer: iss, Subject: "alice ", Username: "alice"}},
		{"subject with a newline", &httpauth.Identity{Issuer: iss, Subject: "alice\n", Username: "alice"}},
		{"subject with a forged second line", &httpauth.Identity{Issuer: iss, Subject: "x\nuser=alice"}},
		{"subject with NUL", &httpauth.Identity{Issuer: iss, Subject: "alice\x00", Username: "alice"}},
		{"Cyrillic look-alike", &httpauth.Identity{Issuer: iss, Subject: "\u0430lice", Username: "alice"}},
		{"fullwidth look-alike", &httpauth.Identity{Issuer: iss, Subject: "\uff41lice", Username: "alice"}},
		{"zero-width space", &httpauth.Identity{Issuer: iss, Subject: "alice\u200b", Username: "alice"}},
		{"upper case", &httpauth.Identity{Issuer: iss, Subject: "Alice", Username: "alice"}},
		{"same subject from another issuer", &httpauth.Identity{Issuer: "https://evil.example.com/", Subject: "alice", Username: "alice"}},
		{"same subject, issuer with a trailing slash", &httpauth.Identity{Issuer: iss + "/", Subject: "alice", Username: "alice"}},
		{"same subject, no issuer", &httpauth.Identity{Subject: "alice", Username: "alice"}},
		{"issuer and subject shifted", &httpauth.Identity{Issuer: iss + "a", Subject: "lice", Username: "alice"}},
		{"empty subject", &httpauth.Identity{Issuer: iss, Username: "alice"}},
		{"empty subject and issuer", &httpauth.Identity{Username: "alice"}},
	}
	e := newEnv(t, toolcall.Config{})
	callAs := func(id *httpauth.Identity, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		ctx := t.Context()
		if id != nil {
			ctx = httpauth.ContextWithIdentity(ctx, id)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "delete_value", args
		res, err := e.c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	c := code(t, callAs(alice, map[string]any{"key": "b"}))
	for _, h := range hostile {
		res := callAs(h.id, map[string]any{"key": "b", "confirm": c})
		if !res.IsError {
			t.Errorf("%s: %+q redeemed alice's code: %s", h.name, *h.id, text(res))
		}
		e.unchanged()
	}
	// Neither the local user nor an anonymous caller.
	if res := callAs(nil, map[string]any{"key": "b", "confirm": c}); !res.IsError || !strings.Contains(text(res), "another caller") {
		t.Errorf("the local user redeemed alice's code: %s", text(res))
	}
	e.unchanged()
	if res := callAs(alice, map[string]any{"key": "b", "confirm": c}); res.IsError || text(res) != "deleted b" {
		t.Fatalf("alice's own code: %s", text(res))
	}

	recs := e.records()
	first, last := recs[0], recs[len(recs)-1]
	if first["issuer"] != iss || first["subject"] != "alice" || first["identity"] != "oauth:alice user=alice" {
		t.Errorf("alice's preview record %v", first)
	}
	if last["issuer"] != iss || last["subject"] != "alice" || last["approval"] != "confirmation_code" {
		t.Errorf("alice's outcome record %v", last)
	}
	// A hostile subject is recorded as it was, in its own field, and the
	// readable identity quotes it rather than let it pass for alice.
	for _, r := range recs[1 : 1+len(hostile)] {
		sub, _ := r["subject"].(string)
		if sub == "alice" && r["issuer"] == iss {
			t.Errorf("a hostile caller recorded as alice: %v", r)
		}
		if id := str(r["identity"]); (id == "oauth:alice user=alice" && r["issuer"] == iss) || strings.ContainsAny(id, "\n\x00") {
			t.Errorf("identity %q reads as alice or breaks the line", id)
		}
	}
}
