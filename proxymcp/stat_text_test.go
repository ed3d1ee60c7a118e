package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxytest"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/stattest"
	"github.com/mcpfleet/mcpfleet/shared/e2e"
)

// TestShowStatTextByProtocol: a client that reads structuredContent
// (protocol 2025-06-18 or later) gets every row there once and a summary
// as text; an older client gets the JSON as text too, as the spec asks for
// backwards compatibility. show_info follows the same rule.
func TestShowStatTextByProtocol(t *testing.T) {
	bin := e2e.Build(t, ".")
	h := haproxytest.Run(t, haproxytest.Options{BigServers: 20})
	for _, tc := range []struct {
		version string
		summary bool
	}{
		{"", true}, // the SDK's latest
		{"2025-06-18", true},
		{"2025-03-26", false},
	} {
		t.Run("protocol_"+tc.version, func(t *testing.T) {
			var opts []e2e.Option
			if tc.version != "" {
				opts = append(opts, e2e.Protocol(tc.version))
			}
			cs := e2e.Stdio(t, bin, haproxyEnv(h, "unix"), opts...)
			res := e2e.CallTool(t, cs, "show_stat", map[string]any{"filter": "be_big"})
			if res.IsError {
				t.Fatal(e2e.Text(res))
			}
			structured, _ := json.Marshal(res.StructuredContent)
			var out struct {
				Count  int    `json:"count"`
				Format string `json:"format"`
			}
			var rows []map[string]any
			decoded, err := stattest.Rows(structured) // the default, the table format
			if err == nil {
				err = json.Unmarshal(structured, &out)
			}
			if err == nil {
				err = json.Unmarshal(decoded, &rows)
			}
			if err != nil || out.Count != 21 || out.Format != "table" || len(rows) != 21 || rows[20]["svname"] != "BACKEND" {
				t.Fatalf("structuredContent: %d rows, format %q (%v)", len(rows), out.Format, err)
			}
			checkInfoText(t, e2e.CallTool(t, cs, "show_info", nil), tc.summary)
			text := e2e.Text(res)
			if !tc.summary {
				var fromText any
				if err := json.Unmarshal([]byte(text), &fromText); err != nil {
					t.Fatalf("text is not the JSON: %.100s", text)
				}
				if again, _ := json.Marshal(fromText); string(again) != string(structured) {
					t.Errorf("text JSON differs from structuredContent")
				}
				return
			}
			for _, want := range []string{"21 statistics rows from the runtime api", "20 server, 1 backend", "structuredContent.rows", "Servers by status: 20 no check."} {
				if !strings.Contains(text, want) {
					t.Errorf("summary lacks %q:\n%s", want, text)
				}
			}
			if len(text) > 1000 {
				t.Errorf("summary is %d bytes", len(text))
			}
		})
	}
}

// checkInfoText checks show_info's text: the JSON of structuredContent, or
// (summary) a line that points to it.
func checkInfoText(t *testing.T, res *mcp.CallToolResult, summary bool) {
	t.Helper()
	if res.IsError {
		t.Fatal(e2e.Text(res))
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Info   map[string]any `json:"info"`
		Source string         `json:"source"`
	}
	if err := json.Unmarshal(structured, &out); err != nil || out.Source != "runtime_api" || out.Info["Name"] != "HAProxy" || len(out.Info) < 20 {
		t.Fatalf("show_info structuredContent: source %q, Name %v, %d fields (%v): %.300s", out.Source, out.Info["Name"], len(out.Info), err, structured)
	}
	text := e2e.Text(res)
	if !summary {
		var fromText any
		if err := json.Unmarshal([]byte(text), &fromText); err != nil {
			t.Fatalf("show_info text is not the JSON: %.100s", text)
		}
		if again, _ := json.Marshal(fromText); string(again) != string(structured) {
			t.Errorf("show_info text JSON differs from structuredContent")
		}
		return
	}
	for _, want := range []string{"HAProxy " + out.Info["Version"].(string) + " (pid ", "connections now (maxconn ", "structuredContent.info"} {
		if !strings.Contains(text, want) {
			t.Errorf("show_info summary lacks %q:\n%s", want, text)
		}
	}
	if len(text) > 300 {
		t.Errorf("show_info summary is %d bytes", len(text))
	}
}
