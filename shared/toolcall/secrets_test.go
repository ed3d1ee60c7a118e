package toolcall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// configPassword is a secret the planner knows from its own configuration
// and embeds in the commands (as streammcp's SASL password would be); it
// declares it in Plan.Secrets.
const configPassword = "cfgHUNTER2pw"

// registerLeaky declares a tool whose planner spells its arguments every
// way a real one might — Go %v and %q, JSON, a query string, the target's
// URL, the preview, and an error echoing all of it — so any secret an
// argument carries reaches every field of the audit record unless the
// audit log removes it.
func registerLeaky(p *toolcall.Pipeline) {
	tool := mcp.NewToolWithRawSchema("apply_config", "Apply client configuration.", json.RawMessage(`{"type":"object","additionalProperties":true}`))
	p.Change(tool, toolcall.Destructive, func(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
		args := req.GetArguments()
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		all, _ := json.Marshal(args)
		cmds := []string{"APPLY " + string(all), "LOGIN sasl.jaas.config=PlainLoginModule required username=\"svc\" password=\"" + configPassword + "\";"}
		q := url.Values{}
		for _, k := range keys {
			cmds = append(cmds, fmt.Sprintf("SET %s %v", k, args[k]), fmt.Sprintf("SETQ %s %q", k, fmt.Sprint(args[k])))
			q.Set(k, fmt.Sprint(args[k]))
		}
		cmds = append(cmds, "POST /config?"+q.Encode())
		target := "kv memory://example"
		if u, ok := args["url"].(string); ok {
			target = "kv " + u
		}
		return toolcall.Plan{Class: toolcall.Destructive, Target: target, Commands: cmds, Secrets: []string{configPassword},
			Describe: func(context.Context) (toolcall.Preview, error) {
				return toolcall.Preview{Summary: "Apply " + string(all) + " as " + configPassword, State: args}, nil
			},
			Run: func(context.Context) (*mcp.CallToolResult, error) {
				return nil, mcperr.New(mcperr.Conflict, "apply "+strings.Join(cmds, " | "), fmt.Errorf("back end answered: bad config %v", args), "")
			}}, nil
	})
}

// spellings are the ways a secret can be written into a JSON line.
func spellings(s string) []string {
	j, _ := json.Marshal(s)
	q := strconv.Quote(s)
	return []string{s, string(j[1 : len(j)-1]), q[1 : len(q)-1], url.QueryEscape(s), url.PathEscape(s)}
}

// TestSecretsNeverInAuditRecords: for every shape an argument can carry a
// secret in, the secret's bytes, in any spelling, appear nowhere in the
// audit file — not in arguments, commands, target, error or identity — for
// a dry run, a pending confirmation, the confirmed call's intent and its
// failed outcome.
func TestSecretsNeverInAuditRecords(t *testing.T) {
	special := `hunter2Q"uo\te<tag>&amp; ü%20+/=`
	cases := []struct {
		name    string
		args    map[string]any
		secrets []string // planted values; every spelling must be absent
		keep    string   // non-secret text that must stay in the record
	}{
		{"top-level password", map[string]any{"password": "hunter2A", "user": "svc"}, []string{"hunter2A"}, "svc"},
		{"camelCase clientSecret", map[string]any{"clientSecret": "hunter2B"}, []string{"hunter2B"}, ""},
		{"special characters", map[string]any{"password": special}, []string{special}, ""},
		{"the secret repeated in a data field", map[string]any{"password": "hunter2C", "note": "my pw is hunter2C ok"}, []string{"hunter2C"}, "my pw is"},
		{"header map: Authorization", map[string]any{"headers": map[string]any{"Authorization": "Bearer hunter2D.eyJ", "Accept": "text/plain"}}, []string{"hunter2D.eyJ"}, "text/plain"},
		{"header map: X-Api-Key", map[string]any{"headers": map[string]any{"X-Api-Key": "hunter2E"}}, []string{"hunter2E"}, ""},
		{"header map: Cookie", map[string]any{"headers": map[string]any{"Cookie": "session=hunter2F; theme=dark"}}, []string{"hunter2F"}, ""},
		{"config map: sasl.jaas.config", map[string]any{"configs": map[string]any{
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="hunter2G";`, "acks": "all"}},
			[]string{"hunter2G"}, "acks"},
		{"config map: ssl.key.password", map[string]any{"configs": map[string]any{"ssl.key.password": "hunter2H", "ssl.keystore.location": "/etc/ks.jks"}}, []string{"hunter2H"}, "/etc/ks.jks"},
		{"config list of name/value", map[string]any{"configs": []any{map[string]any{"name": "ssl.truststore.password", "value": "hunter2I"}, map[string]any{"name": "retention.ms", "value": "1000"}}},
			[]string{"hunter2I"}, "retention.ms"},
		{"header list of pairs", map[string]any{"headers": []any{[]any{"Proxy-Authorization", "Basic hunter2J"}, []any{"trace", "abc"}}}, []string{"hunter2J"}, "trace"},
		{"config list of assignments", map[string]any{"settings": []any{`sasl.jaas.config=PlainLoginModule required username="bob" password="hunter2K";`, "linger.ms=5"}},
			[]string{"hunter2K"}, "linger.ms"},
		{"header lines", map[string]any{"headers": []any{"Authorization: Bearer hunter2L", "Accept: */*"}}, []string{"hunter2L"}, "Accept"},
		{"URL with a password", map[string]any{"url": "https://svc:hunter2M%21@broker.example.com:9093/path"}, []string{"hunter2M%21", "hunter2M!"}, "broker.example.com"},
		{"connection string in a data field", map[string]any{"dsn": "host=db user=svc password=hunter2N sslmode=require"}, []string{"hunter2N"}, "sslmode"},
		{"deeply nested private key", map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": map[string]any{"private_key": "-----BEGIN KEY-----\nhunter2O\n-----END KEY-----"}}}}}, []string{"hunter2O"}, ""},
		{"number under a secret name", map[string]any{"pin_token": 4242427, "count": 3}, []string{"4242427"}, ""},
		{"object under a secret name", map[string]any{"credentials": map[string]any{"user": "svc", "pass": "hunter2P"}}, []string{"hunter2P"}, ""},
		{"secret in a map key's value and query string", map[string]any{"api_key": "hunter2Q&x=1"}, []string{"hunter2Q&x=1"}, ""},
		{"secret with newline", map[string]any{"token": "hunter2R\nline2"}, []string{"hunter2R\nline2", "hunter2R"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.log")
			srv := server.NewMCPServer("example", "v0", server.WithHooks(&server.Hooks{}))
			p, err := toolcall.New(srv, toolcall.Config{Audit: audit.Config{Dest: path}, Approval: approval.Config{}}, toolcall.Options{Server: "example", Local: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			registerLeaky(p)
			call := func(extra map[string]any) *mcp.CallToolResult {
				args := map[string]any{}
				for k, v := range tc.args {
					args[k] = v
				}
				for k, v := range extra {
					args[k] = v
				}
				msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "apply_config", "arguments": args}})
				out, _ := json.Marshal(srv.HandleMessage(t.Context(), msg))
				var resp struct {
					Result json.RawMessage `json:"result"`
				}
				json.Unmarshal(out, &resp)
				res, err := mcp.ParseCallToolResult(&resp.Result)
				if err != nil {
					t.Fatalf("%s: %v", out, err)
				}
				return res
			}
			call(map[string]any{"dryRun": true})
			c := code(t, call(nil))
			if res := call(map[string]any{"confirm": c}); !res.IsError || !strings.Contains(text(res), "bad config") {
				t.Fatalf("confirmed call: %s", text(res))
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "\n"); n != 4 { // dry run, pending, intent, outcome
				t.Fatalf("%d records:\n%s", n, b)
			}
			for _, s := range append(tc.secrets, configPassword) {
				for _, sp := range spellings(s) {
					if strings.Contains(string(b), sp) {
						t.Errorf("secret %q found as %q in the audit file:\n%s", s, sp, b)
					}
				}
			}
			if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "HUNTER2") {
				t.Errorf("a secret's core is in the audit file:\n%s", b)
			}
			if tc.keep != "" && !strings.Contains(string(b), tc.keep) {
				t.Errorf("non-secret %q was removed too:\n%s", tc.keep, b)
			}
			var last map[string]any
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["outcome"] != "error" || !strings.Contains(str(last["error"]), "bad config") {
				t.Errorf("outcome record %v (%v)", last, err)
			}
		})
	}
}
