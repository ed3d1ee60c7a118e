package toolcall

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// A plan's Run may need to put a further question to the person while it
// runs — a back end that asks before each step (codermcp: the Codex CLI's
// own approval requests) — and audit each answer as the pipeline audits
// its own approval. These are the pipeline's own ways of doing both, so a
// server neither rebuilds the caller's identity nor opens a second writer
// on the audit log.

// AuditRecord starts an audit record of something a call of a change tool
// does beyond its plan, as the pipeline starts the call's own record:
// server and version, the tool (req's name) and class, the caller's
// identity words with OAuth issuer and subject, the request id, session
// and client, and the arguments (without dryRun and confirm). req is the
// request as the planner received it (CallRequest in the planner's ctx);
// ctx is the call's. The caller sets what the record is about (Target,
// Commands, Event, Approval, Outcome) and writes it with WriteAudit.
func (p *Pipeline) AuditRecord(ctx context.Context, req mcp.CallToolRequest, class Class) audit.Record {
	return p.record(ctx, req.Params.Name, class, req)
}

// WriteAudit writes rec to the pipeline's audit log (MCP_AUDIT_LOG), the
// one writer of that destination. Secrets in the arguments and texts are
// redacted as in every record. An error means the record is not written:
// do not do what it would have recorded.
func (p *Pipeline) WriteAudit(rec audit.Record) error {
	return p.log.Write(rec)
}

// CannotAsk says why this call cannot put a question to the person in the
// middle of its run, or "" when Ask can: inside a task (the task goes
// input_required, on 2025-11-25 and the 2026-07-28 tasks extension) when
// the client declared elicitation; outside a task, elicitation/create on
// the caller's session (2025-11-25 and earlier). A 2026-07-28 call that is
// not a task cannot be asked mid-run: its input-required results answer
// before the call runs. Call it while planning, to refuse a call that
// would need a person before anything starts.
func (p *Pipeline) CannotAsk(ctx context.Context) string {
	req, _ := CallRequest(ctx)
	inTask := req.Params.Task != nil || tasks.CanAsk(ctx)
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		switch {
		case info.ClientCapabilities == nil || !formElicitation(info.ClientCapabilities.Elicitation):
			return "this client did not declare elicitation (form mode)"
		case !inTask:
			return "the client speaks MCP " + info.ProtocolVersion + ", on which a call that is not a task cannot ask in the middle of its run (call it as a task)"
		}
		return ""
	}
	sess := server.ClientSessionFromContext(ctx)
	if _, ok := sess.(server.SessionWithElicitation); !ok {
		return "this connection cannot carry a question to the client"
	}
	ci, ok := sess.(server.SessionWithClientInfo)
	if !ok || !formElicitation(ci.GetClientCapabilities().Elicitation) {
		return "this client did not declare elicitation (form mode)"
	}
	return ""
}

// Ask puts q to the person from a running call, as the pipeline asks for
// its own approvals: inside a task the task goes input_required with q
// until the client answers (tasks.Ask); outside one, elicitation/create on
// the caller's session. It waits until the person answers or ctx ends (the
// caller bounds it: no answer in time is the caller's decline). Ask only
// where CannotAsk is "": elsewhere the question has no way to the person.
func (p *Pipeline) Ask(ctx context.Context, q mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	if tasks.CanAsk(ctx) {
		return tasks.Ask(ctx, q)
	}
	return p.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)}, Params: q})
}
