package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/argschema"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// Code purposes (approval.Binding.Purpose).
const (
	purposeConfirm = "confirm"
	purposeElicit  = "elicit"
)

// approveID is the key of the pipeline's elicitation in an input-required
// result.
const approveID = "approve"

// call is the pipeline for one call of a Change tool.
// schema, when not nil, is the tool's compiled input schema, checked here
// so that an invalid call is refused with its audit record; typed tools
// pass nil, having checked the call against theirs already.
func (p *Pipeline) call(ctx context.Context, tool mcp.Tool, most Class, plan Planner, req mcp.CallToolRequest, schema *argschema.Compiled) (*mcp.CallToolResult, error) {
	start := p.now()
	rec := p.record(ctx, tool.Name, most, req)
	finish := func(res *mcp.CallToolResult, approvalHow string, err error) (*mcp.CallToolResult, error) {
		rec.Approval = approvalHow
		return p.outcome(ctx, rec, start, res, err)
	}

	if schema != nil {
		if _, err := schema.Parse(req.Params.Arguments); err != nil {
			return finish(nil, audit.Refused, err)
		}
	}
	args := req.GetArguments()
	dryRun, _ := args["dryRun"].(bool)
	code, _ := args["confirm"].(string)
	if v, ok := args["confirm"]; ok {
		if _, isString := v.(string); !isString {
			// The schema says string; this guards tools whose raw schema
			// could not be augmented: a bare confirm: true is never approval.
			return finish(nil, audit.Refused, mcperr.Invalidf("argument \"confirm\" must be the confirmation code string from a preview, got %v", v))
		}
		if strings.TrimSpace(code) == "" {
			return finish(nil, audit.Refused, mcperr.Invalidf("argument \"confirm\" is empty: pass the confirmation code from a preview, or leave confirm out to get one"))
		}
	}
	if dryRun && code != "" {
		return finish(nil, audit.Refused, mcperr.Invalidf("dryRun and confirm were both given: a dry run changes nothing, so it needs no confirmation; send one or the other"))
	}
	callReq := req
	callReq.Params.Arguments = stripped(args)
	callReq.Params.RawArguments = strippedRaw(req.Params.RawArguments)
	rec.Arguments = callReq.GetArguments()

	pl, err := plan(ctx, callReq)
	if err != nil {
		return finish(nil, audit.Refused, err)
	}
	if pl.Run == nil {
		return finish(nil, audit.Refused, mcperr.New(mcperr.Internal, "plan "+tool.Name, errors.New("the plan has no Run"), "this is a bug in the server; report it"))
	}
	rec.Class, rec.Target, rec.Commands, rec.Secrets = pl.Class.String(), pl.Target, pl.Commands, pl.Secrets
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String(AttrClass, rec.Class), attribute.Bool(AttrDryRun, dryRun))
	}
	if pl.Class == Read && !dryRun && pl.Approve == "" {
		// A read call of a change tool (a SELECT through execute_query)
		// takes the read path: no approval, no audit.
		return pl.Run(ctx)
	}

	binding := approval.Binding{Tool: tool.Name, Target: pl.Target, Caller: p.caller(ctx), Arguments: rec.Arguments}
	if dryRun {
		rec.DryRun = true
		pv, err := p.describe(ctx, pl)
		if err != nil {
			return finish(nil, "", err)
		}
		return finish(p.previewResult(tool.Name, pl, pv, nil), "", nil)
	}

	if pl.Approve != "" && p.cfg.Approval.Policy == approval.None {
		return finish(nil, audit.Refused, &mcperr.Error{Kind: mcperr.Permission,
			Op:   fmt.Sprintf("refused %s: %s; such a call needs a person's approval, and MCP_APPROVAL=none asks nobody; nothing was run", tool.Name, pl.Approve),
			Hint: "change the call so that it needs no approval, or ask the operator to set MCP_APPROVAL to destructive or change so that a person can approve it"})
	}
	if pl.Approve == "" && (pl.Class == Read || !p.cfg.Approval.Policy.Needs(pl.Class.String())) {
		return p.run(ctx, rec, start, pl, audit.ByPolicy)
	}

	// A confirmation code from an earlier preview.
	if code != "" {
		binding.Purpose = purposeConfirm
		claims, err := p.codes.Redeem(ctx, code, binding)
		if err != nil {
			return finish(nil, audit.Refused, codeRefusal(tool.Name, err))
		}
		if err := p.recheck(ctx, pl, claims.Precondition); err != nil {
			return finish(nil, audit.Refused, err)
		}
		return p.run(ctx, rec, start, pl, audit.ByConfirmationCode)
	}

	// A task's run outlives its request: it asks inside the task
	// (input_required, tasks.Ask) when its client declared elicitation,
	// else it takes the fallback.
	inTask := req.Params.Task != nil || tasks.CanAsk(ctx)
	ask := p.askVia(ctx)
	if inTask && ask != askNone {
		ask = askNone
		if tasks.CanAsk(ctx) {
			ask = askTask
		}
	}
	switch ask {
	case askTask:
		actx, end := p.phase(ctx, "toolcall.approve")
		res, err := p.askInTask(actx, rec, start, tool.Name, pl)
		end(err)
		return res, err
	case askRoundTrip:
		// Each leg of the round trip (the question, then the retry with the
		// answer) has its approval span, as the session path has.
		actx, end := p.phase(ctx, "toolcall.approve")
		res, err := p.roundTrip(actx, rec, start, tool.Name, pl, binding, req)
		end(err)
		return res, err
	case askSession:
		// The person's answer can take minutes: a span of its own shows it.
		actx, end := p.phase(ctx, "toolcall.approve")
		res, err := p.elicit(actx, rec, start, tool.Name, pl)
		end(err)
		return res, err
	}

	if p.cfg.Approval.Fallback == approval.Refuse && inTask {
		return finish(nil, audit.Refused, &mcperr.Error{Kind: mcperr.Permission,
			Op:   fmt.Sprintf("refused %s: this %s call needs a person's approval, the task cannot ask one (this client did not declare elicitation, so the task cannot go input_required with the request), and MCP_APPROVAL_FALLBACK=refuse; nothing was changed", tool.Name, pl.Class),
			Hint: "use a client that supports elicitation (the task then asks the person), or ask the operator to allow confirmation codes (MCP_APPROVAL_FALLBACK=confirm)"})
	}
	if p.cfg.Approval.Fallback == approval.Refuse {
		return finish(nil, audit.Refused, &mcperr.Error{Kind: mcperr.Permission,
			Op:   fmt.Sprintf("refused %s: this %s call needs a person's approval and this client cannot ask one (it did not declare elicitation), and MCP_APPROVAL_FALLBACK=refuse; nothing was changed", tool.Name, pl.Class),
			Hint: "use a client that supports elicitation, or ask the operator to allow confirmation codes (MCP_APPROVAL_FALLBACK=confirm)"})
	}
	pv, err := p.describe(ctx, pl)
	if err != nil {
		return finish(nil, audit.Pending, err)
	}
	binding.Purpose = purposeConfirm
	binding.Precondition = pv.Precondition
	c, err := p.codes.Issue(binding)
	if err != nil {
		return finish(nil, audit.Refused, mcperr.Wrap(err, "issue a confirmation code for "+tool.Name, ""))
	}
	return finish(p.previewResult(tool.Name, pl, pv, &confirmation{Code: c, Expires: p.now().Add(p.cfg.Approval.Timeout), InTask: inTask}), audit.Pending, nil)
}

// codeRefusal words a refused code: a bad code is the caller's to fix, a
// ledger that cannot be read or written the operator's.
func codeRefusal(tool string, err error) error {
	var le *approval.LedgerError
	if errors.As(err, &le) {
		return mcperr.New(mcperr.Unavailable, "refused "+tool, err, approval.LedgerHint)
	}
	return mcperr.New(mcperr.Invalid, "refused "+tool, err, "")
}

// run writes the intent record (synced), runs the plan, and writes the
// outcome. A failed intent record refuses the call: no change without its
// record.
func (p *Pipeline) run(ctx context.Context, rec audit.Record, start time.Time, pl Plan, how string) (*mcp.CallToolResult, error) {
	rec.Approval = how
	intent := rec
	intent.Event = audit.Intent
	_, end := p.phase(ctx, "toolcall.audit")
	err := p.log.Write(intent)
	end(err)
	if err != nil {
		rec.Approval = audit.Refused
		refusal := &mcperr.Error{Kind: mcperr.Unavailable,
			Op:   fmt.Sprintf("refused %s: the audit record could not be written, and no change is made without its record; nothing was changed", rec.Tool),
			Err:  err,
			Hint: "free space, or fix the path or the permissions of MCP_AUDIT_LOG (the next call reopens it), then retry"}
		return p.outcome(ctx, rec, start, nil, refusal)
	}
	res, err := pl.Run(ctx)
	return p.outcome(ctx, rec, start, res, err)
}

// recheck describes again and compares the precondition the approval was
// given for.
func (p *Pipeline) recheck(ctx context.Context, pl Plan, claimed string) error {
	if claimed == "" || pl.Describe == nil {
		return nil
	}
	now, err := pl.Describe(ctx)
	if err != nil {
		return mcperr.Wrap(err, "re-read the state before running the approved call; nothing was changed", "")
	}
	if !approval.PreconditionMatches(claimed, now.Precondition) {
		return &mcperr.Error{Kind: mcperr.Conflict,
			Op:   "state changed since the preview: " + now.Summary + " Nothing was changed",
			Hint: "call again without confirm for a fresh preview and ask the user again"}
	}
	return nil
}

func (p *Pipeline) describe(ctx context.Context, pl Plan) (Preview, error) {
	if pl.Describe == nil {
		return Preview{Summary: fmt.Sprintf("Send %d command(s) to %s.", len(pl.Commands), pl.Target)}, nil
	}
	dctx, end := p.phase(ctx, "toolcall.describe")
	pv, err := pl.Describe(dctx)
	end(err)
	if err != nil {
		return Preview{}, mcperr.Wrap(err, "read the current state for the preview; nothing was changed", "")
	}
	return pv, nil
}

// outcome writes the outcome record and returns res (or err as a tool
// error).
func (p *Pipeline) outcome(ctx context.Context, rec audit.Record, start time.Time, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String(AttrApproval, rec.Approval))
	}
	rec.Event = audit.Outcome
	if rec.Approval != "" && p.o.OnDecision != nil {
		p.o.OnDecision(rec.Tool, rec.Approval)
	}
	d := p.now().Sub(start).Milliseconds()
	rec.DurationMS = &d
	if err != nil {
		res = mcperr.ToolResult(err)
	}
	rec.Outcome = "ok"
	if res == nil {
		rec.Outcome, rec.Error = "error", "the tool returned no result"
	} else if res.IsError {
		rec.Outcome, rec.Error = "error", resultText(res)
	}
	if werr := p.log.Write(rec); werr != nil {
		p.o.Logger.Error("audit outcome record not written", "tool", rec.Tool, "request_id", rec.RequestID, "err", werr)
	}
	return res, nil
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// stripped returns args without the pipeline's own arguments.
func stripped(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if k == "dryRun" || k == "confirm" {
			continue
		}
		out[k] = v
	}
	return out
}

// strippedRaw removes the pipeline's own arguments from the wire bytes,
// keeping every other value's exact text (integers above 2^53 included).
func strippedRaw(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	delete(m, "dryRun")
	delete(m, "confirm")
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// askKind is how a person can be asked in this call.
type askKind int

const (
	askNone      askKind = iota
	askRoundTrip         // 2026-07-28: an input-required result
	askSession           // 2025-11-25 and earlier: elicitation/create on the session
	askTask              // inside a task: input_required until the client answers
)

func (p *Pipeline) askVia(ctx context.Context) askKind {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities != nil && formElicitation(info.ClientCapabilities.Elicitation) {
			return askRoundTrip
		}
		return askNone
	}
	s := server.ClientSessionFromContext(ctx)
	ci, ok := s.(server.SessionWithClientInfo)
	if !ok {
		return askNone
	}
	if _, ok := s.(server.SessionWithElicitation); !ok {
		return askNone
	}
	if formElicitation(ci.GetClientCapabilities().Elicitation) {
		return askSession
	}
	return askNone
}

// formElicitation reports whether the capability includes form mode (an
// empty elicitation capability means form mode).
func formElicitation(c *mcp.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// Attributes the pipeline puts on a change tool's span.
const (
	AttrClass    = "mcpfleet.tool.class"    // read, change, destructive: this call's class
	AttrDryRun   = "mcpfleet.tool.dry_run"  // a preview only
	AttrApproval = "mcpfleet.tool.approval" // the audit record's approval (policy, person, declined...)
)

// phase starts a child span of the tool's span for one of the pipeline's
// slow steps; end records its error. With tracing off it costs a nil check.
func (p *Pipeline) phase(ctx context.Context, name string) (context.Context, func(error)) {
	if p.o.Tracer == nil {
		return ctx, func(error) {}
	}
	t := p.o.Tracer()
	if t == nil {
		return ctx, func(error) {}
	}
	ctx, span := t.Start(ctx, name)
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
