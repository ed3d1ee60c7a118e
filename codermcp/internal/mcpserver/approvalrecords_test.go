package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// TestCLIApprovalRecordsAreTheCalls: the records of the person's answers to
// the CLI's approval requests are written to the pipeline's own log and
// say who, from where and with what exactly as the call's own records do —
// identity, issuer, subject, session, client, server, version, arguments,
// and the call's request id, so a reader joins the answers to their call.
func TestCLIApprovalRecordsAreTheCalls(t *testing.T) {
	t.Parallel()
	p := &person{action: "accept"}
	e := newPersonEnv(t, cliEnv(codertest.CLIVersion(t, codertest.NewestVersion), 2*time.Minute), p)
	dir := t.TempDir()
	mustOK(t, e.call(t, "coder", map[string]any{"prompt": "[[shell:echo approved > marker]]", "sandbox": "workspace-write",
		"approvalPolicy": "untrusted", "workingDirectory": dir}))
	var call, answers []map[string]any
	for _, r := range e.records(t) {
		if strings.Contains(fmt.Sprint(r["target"]), "approval request (untrusted)") {
			answers = append(answers, r)
		} else {
			call = append(call, r)
		}
	}
	if len(call) != 2 || call[0]["event"] != "intent" || len(answers) != 2 {
		t.Fatalf("the call's records %v, the answers' %v: want the call's intent and outcome and the accepted request's intent and outcome", call, answers)
	}
	if call[0]["request_id"] == nil || call[0]["client"] == nil || call[0]["session"] == nil {
		t.Fatalf("the call's record lacks what the answers must share: %v", call[0])
	}
	for i, r := range answers {
		for _, k := range []string{"identity", "issuer", "subject", "session", "client", "server", "server_version", "tool", "class", "request_id", "arguments"} {
			if fmt.Sprint(r[k]) != fmt.Sprint(call[0][k]) {
				t.Errorf("answer record %d %s: %v, the call's record %v", i, k, r[k], call[0][k])
			}
		}
	}
}
