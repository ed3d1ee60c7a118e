package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/httpauth"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// elicit asks the person over the session (elicitation/create, protocol
// 2025-11-25 and earlier) and waits up to MCP_APPROVAL_TIMEOUT.
func (p *Pipeline) elicit(ctx context.Context, rec audit.Record, start time.Time, name string, pl Plan) (*mcp.CallToolResult, error) {
	return p.askPerson(ctx, rec, start, name, pl, p.srv.RequestElicitation)
}

// askInTask asks the person from inside a task: the task goes
// input_required with the approval request, answered through tasks/update
// (2026-07-28 tasks extension) or as an elicitation/create on the client's
// tasks/result (2025-11-25); no answer within MCP_APPROVAL_TIMEOUT
// declines.
func (p *Pipeline) askInTask(ctx context.Context, rec audit.Record, start time.Time, name string, pl Plan) (*mcp.CallToolResult, error) {
	return p.askPerson(ctx, rec, start, name, pl, func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return tasks.Ask(ctx, req.Params)
	})
}

// askPerson asks the person through request and runs the plan once they
// accept.
func (p *Pipeline) askPerson(ctx context.Context, rec audit.Record, start time.Time, name string, pl Plan,
	request func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)) (*mcp.CallToolResult, error) {
	finish := func(how string, err error) (*mcp.CallToolResult, error) {
		rec.Approval = how
		return p.outcome(ctx, rec, start, nil, err)
	}
	pv, err := p.describe(ctx, pl)
	if err != nil {
		return finish(audit.Refused, err)
	}
	actx, cancel := context.WithTimeout(ctx, p.cfg.Approval.Timeout)
	res, err := request(actx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  p.elicitation(name, pl, pv),
	})
	timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	switch {
	case timedOut:
		return finish(audit.Timeout, p.noAnswer(name))
	case err != nil && ctx.Err() != nil:
		return finish(audit.Refused, mcperr.Wrap(ctx.Err(), "ask the person to approve "+name+"; nothing was changed", ""))
	case err != nil:
		return finish(audit.Refused, mcperr.New(mcperr.Unavailable, "ask the person to approve "+name+"; nothing was changed", err,
			"the client declared elicitation but could not show the request; retry, or use a client whose elicitation works"))
	case res == nil || res.Action != mcp.ElicitationResponseActionAccept:
		action := "declined"
		if res != nil && res.Action == mcp.ElicitationResponseActionCancel {
			action = "cancelled"
		}
		return finish(audit.Declined, p.declined(name, action))
	}
	if pv.Precondition != "" {
		if err := p.recheckWith(ctx, pl, func(now string) bool { return now == pv.Precondition }); err != nil {
			return finish(audit.Refused, err)
		}
	}
	return p.run(ctx, rec, start, pl, audit.ByPerson)
}

// roundTrip asks the person with an input-required result (protocol
// 2026-07-28): the first call returns the elicitation and a signed request
// state bound to this exact call; the client retries with the answer.
func (p *Pipeline) roundTrip(ctx context.Context, rec audit.Record, start time.Time, name string, pl Plan, b approval.Binding, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	finish := func(res *mcp.CallToolResult, how string, err error) (*mcp.CallToolResult, error) {
		rec.Approval = how
		return p.outcome(ctx, rec, start, res, err)
	}
	b.Purpose = purposeElicit
	answer := server.ElicitationResponse(req.Params.InputResponses, approveID)
	if answer == nil && req.Params.RequestState == "" {
		pv, err := p.describe(ctx, pl)
		if err != nil {
			return finish(nil, audit.Refused, err)
		}
		b.Precondition = pv.Precondition
		state, err := p.codes.Issue(b)
		if err != nil {
			return finish(nil, audit.Refused, mcperr.Wrap(err, "ask the person to approve "+name, ""))
		}
		res := server.NewInputRequestBuilder(state).Elicit(approveID, p.elicitation(name, pl, pv)).ToolResult()
		return finish(res, audit.Pending, nil)
	}
	if answer == nil {
		return finish(nil, audit.Refused, mcperr.Invalidf("the retry of %s carried no answer to the approval request %q; nothing was changed. Retry the call without inputResponses and requestState to be asked again", name, approveID))
	}
	if answer.Action != mcp.ElicitationResponseActionAccept {
		action := "declined"
		if answer.Action == mcp.ElicitationResponseActionCancel {
			action = "cancelled"
		}
		return finish(nil, audit.Declined, p.declined(name, action))
	}
	claims, err := p.codes.Redeem(ctx, req.Params.RequestState, b)
	if err != nil {
		var ce *approval.CodeError
		var le *approval.LedgerError
		switch {
		case errors.As(err, &ce) && ce.Reason == approval.Expired:
			return finish(nil, audit.Timeout, p.noAnswer(name))
		case errors.As(err, &le):
			return finish(nil, audit.Refused, codeRefusal(name, err))
		}
		return finish(nil, audit.Refused, mcperr.New(mcperr.Invalid, "refused "+name+": the approval's request state does not match this call", err, ""))
	}
	if err := p.recheck(ctx, pl, claims.Precondition); err != nil {
		return finish(nil, audit.Refused, err)
	}
	return p.run(ctx, rec, start, pl, audit.ByPerson)
}

func (p *Pipeline) recheckWith(ctx context.Context, pl Plan, same func(now string) bool) error {
	now, err := pl.Describe(ctx)
	if err != nil {
		return mcperr.Wrap(err, "re-read the state before running the approved call; nothing was changed", "")
	}
	if !same(now.Precondition) {
		return &mcperr.Error{Kind: mcperr.Conflict,
			Op:   "state changed since the preview: " + now.Summary + " Nothing was changed",
			Hint: "call again for a fresh preview and ask the user again"}
	}
	return nil
}

func (p *Pipeline) declined(name, action string) error {
	return &mcperr.Error{Kind: mcperr.Permission,
		Op:   fmt.Sprintf("the person %s the %s call; nothing was changed", action, name),
		Hint: "do not retry unless the user asks for it"}
}

func (p *Pipeline) noAnswer(name string) error {
	return &mcperr.Error{Kind: mcperr.Timeout,
		Op:   fmt.Sprintf("the person did not answer the approval request for %s within %s (MCP_APPROVAL_TIMEOUT); nothing was changed", name, p.cfg.Approval.Timeout),
		Hint: "call again when the user is ready to answer"}
}

// elicitation is the request a person sees: the dry run in plain words.
func (p *Pipeline) elicitation(name string, pl Plan, pv Preview) mcp.ElicitationParams {
	return mcp.ElicitationParams{
		Message:         previewText(name, pl, pv),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
}

// previewText words a preview: the summary first, then what exactly would
// be sent, where, and the expected effect.
func previewText(name string, pl Plan, pv Preview) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(pv.Summary))
	fmt.Fprintf(&b, "\n\nTool: %s (%s)\nTarget: %s\n", name, pl.Class, pl.Target)
	if len(pl.Commands) > 0 {
		b.WriteString("Would send:\n")
		for _, c := range pl.Commands {
			b.WriteString("  " + c + "\n")
		}
	}
	if pv.Effect != "" {
		b.WriteString("Expected effect: " + pv.Effect + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

type confirmation struct {
	Code    string    `json:"code"`
	Expires time.Time `json:"expires"`
	// InTask is set when the call runs as a task: the text says why the
	// task did not ask (the client declared no elicitation).
	InTask bool `json:"-"`
}

// PreviewResult is the structured content of a dry run or of a
// confirmation request.
type PreviewResult struct {
	DryRun   bool     `json:"dryRun"`
	Tool     string   `json:"tool"`
	Class    string   `json:"class"`
	Target   string   `json:"target"`
	Commands []string `json:"commands"`
	Summary  string   `json:"summary"`
	State    any      `json:"state,omitempty"`
	Effect   string   `json:"effect,omitempty"`
	// Confirmation is set when the call needs approval and the client
	// cannot ask a person: pass Code back as confirm.
	Confirmation *confirmation `json:"confirmation,omitempty"`
}

func (p *Pipeline) previewResult(name string, pl Plan, pv Preview, conf *confirmation) *mcp.CallToolResult {
	out := PreviewResult{DryRun: conf == nil, Tool: name, Class: pl.Class.String(), Target: pl.Target,
		Commands: pl.Commands, Summary: pv.Summary, State: pv.State, Effect: pv.Effect, Confirmation: conf}
	if out.Commands == nil {
		out.Commands = []string{}
	}
	var b strings.Builder
	if conf == nil {
		b.WriteString("Dry run — nothing was changed.\n\n")
	} else {
		b.WriteString("Approval needed — nothing was changed yet.\n\n")
	}
	b.WriteString(previewText(name, pl, pv))
	if pv.State != nil {
		if st, err := json.Marshal(pv.State); err == nil {
			b.WriteString("\nCurrent state: " + string(st))
		}
	}
	if conf != nil {
		fmt.Fprintf(&b, "\n\nShow this preview to the user. If they approve, call %s again with the same arguments and confirm: %q. "+
			"The code works once, only for these arguments and this target, until %s.",
			name, conf.Code, conf.Expires.UTC().Format(time.RFC3339))
	}
	if conf != nil && conf.InTask {
		b.WriteString(" This call runs as a task, and your client did not declare elicitation, so the task cannot ask the user for approval itself " +
			"(with elicitation it would: the task goes input_required with the request); it needs a confirmation code.")
	}
	return mcp.NewToolResultStructured(out, b.String())
}

// requestIDKey is where stampRequestID leaves the JSON-RPC id in the
// request's _meta, for audit records (mcp-go does not put it in ctx).
const requestIDKey = "io.mcpfleet/requestId"

func stampRequestID(_ context.Context, id any, msg *mcp.CallToolRequest) {
	if msg == nil {
		return
	}
	if msg.Params.Meta == nil {
		msg.Params.Meta = &mcp.Meta{}
	}
	if msg.Params.Meta.AdditionalFields == nil {
		msg.Params.Meta.AdditionalFields = map[string]any{}
	}
	msg.Params.Meta.AdditionalFields[requestIDKey] = fmt.Sprint(id)
}

// record starts the audit record of a call with who, from where, and what.
func (p *Pipeline) record(ctx context.Context, name string, most Class, req mcp.CallToolRequest) audit.Record {
	c := p.caller(ctx)
	rec := audit.Record{
		Server: p.o.Server, ServerVersion: p.o.Version, Tool: name, Class: most.String(),
		Arguments: stripped(req.GetArguments()), Identity: p.identity(ctx, c),
	}
	if c.Kind == approval.CallerOAuth {
		rec.Issuer, rec.Subject = c.Issuer, c.Subject
	}
	if m := req.Params.Meta; m != nil {
		if id, ok := m.AdditionalFields[requestIDKey].(string); ok {
			rec.RequestID = id
		}
	}
	s := server.ClientSessionFromContext(ctx)
	if s != nil {
		rec.Session = s.SessionID()
	}
	var ci *mcp.Implementation
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		ci = info.ClientInfo
	} else if withInfo, ok := s.(server.SessionWithClientInfo); ok {
		i := withInfo.GetClientInfo()
		ci = &i
	}
	if ci != nil && ci.Name != "" {
		rec.Client = ci.Name + "/" + ci.Version
	}
	return rec
}

// caller is who made the call, as codes are bound to it: the OAuth issuer
// and subject, the local OS user on stdio, or anonymous.
func (p *Pipeline) caller(ctx context.Context) approval.Caller {
	if id, ok := httpauth.IdentityFromContext(ctx); ok {
		return approval.Caller{Kind: approval.CallerOAuth, Issuer: id.Issuer, Subject: id.Subject}
	}
	if p.o.Local {
		return p.local
	}
	return approval.Caller{Kind: approval.CallerAnonymous}
}

// identity words the caller for people reading the audit trail:
// "oauth:<sub> user=<preferred_username>" (or email=), "local:<os user>",
// "anonymous". A subject or name that could be read as more than itself
// (spaces, "=", quotes, control or non-ASCII characters) is quoted. Nothing
// compares this text: codes are bound to c, and records carry issuer and
// subject as fields of their own.
func (p *Pipeline) identity(ctx context.Context, c approval.Caller) string {
	switch c.Kind {
	case approval.CallerOAuth:
		s := "oauth:" + quoteWord(c.Subject)
		if id, ok := httpauth.IdentityFromContext(ctx); ok {
			switch {
			case id.Username != "":
				s += " user=" + quoteWord(id.Username)
			case id.Email != "":
				s += " email=" + quoteWord(id.Email)
			}
		}
		return s
	case approval.CallerLocal:
		return "local:" + quoteWord(c.Subject)
	}
	return "anonymous"
}

// quoteWord returns s as is when it is one unambiguous word, else quoted.
func quoteWord(s string) string {
	for _, r := range s {
		if r <= ' ' || r > '~' || r == '=' || r == '"' || r == '\\' || r == '\'' {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}
