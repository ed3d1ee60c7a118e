package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/workdir"
	"github.com/mcpfleet/mcpfleet/shared/mcperr"
)

// The typed errors of the back-end packages (cli, workspace, workdir,
// session), which never import mcperr, become what a caller reads here:
// what was attempted, what went wrong and what to do.

// invalidInput turns a refused value into the error the caller reads.
func invalidInput(err error) error {
	var ie *cli.InputError
	if errors.As(err, &ie) {
		return mcperr.New(mcperr.Invalid, ie.Error(), nil, ie.Hint+"; no CLI process was started")
	}
	var te *cli.TargetError
	if errors.As(err, &te) {
		return mcperr.New(mcperr.Invalid, "Invalid review arguments", err, "")
	}
	return err
}

func (s *Server) invalidModel(m, why string) error {
	return mcperr.New(mcperr.Invalid, "Invalid model: "+m, errors.New(why),
		fmt.Sprintf("Omit model to use the default (%s), or choose one of: %s", s.cfg.DefaultModel, joinModels(s.cfg.Models)))
}

// waitFailed explains why waiting for a session or slot ended.
func (s *Server) waitFailed(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), cli.ErrTimeout) {
		return &cli.Error{Kind: cli.FailTimeout, Limit: s.cfg.Timeout, Err: err}
	}
	return &cli.Error{Kind: cli.FailCanceled, Err: err}
}

func (s *Server) failure(err error, model string) *mcp.CallToolResult {
	return mcperr.ToolResult(s.classify(err, model))
}

// classify turns a cli failure into the error a user reads.
func (s *Server) classify(err error, model string) error {
	var ie *cli.InputError
	if errors.As(err, &ie) {
		return invalidInput(err)
	}
	var e *cli.Error
	if !errors.As(err, &e) {
		return err
	}
	// The hint follows after ". ", so the CLI's own full stop goes.
	cause := strings.TrimRight(e.Cause, ". ")
	switch e.Kind {
	case cli.FailAuth:
		return mcperr.New(mcperr.Permission, "Authentication failed: the Codex CLI could not authenticate with its model provider", errors.New(cause),
			"Log in with `codex login` (or set the API key your configured provider expects), then retry")
	case cli.FailModel:
		return s.invalidModel(model, "rejected by the CLI or its provider: "+cause)
	case cli.FailTimeout:
		if e.Step != "" {
			// The version probe (or another short informational command)
			// used up the call's time before any turn started.
			limit := "the request's deadline"
			if e.Limit > 0 {
				limit = fmt.Sprintf("the %s limit (CODER_TIMEOUT)", e.Limit)
			}
			return mcperr.New(mcperr.Timeout, fmt.Sprintf("The CLI timed out before the task started: `%s` did not finish within %s and was stopped; nothing was run", e.Step, limit), nil,
				fmt.Sprintf("Raise CODER_TIMEOUT, or check why `%s` is slow on this machine (machine load, a slow disk or network mount), then retry", e.Step))
		}
		if e.Limit > 0 {
			return mcperr.New(mcperr.Timeout, fmt.Sprintf("The CLI timed out: it did not finish within the %s limit (CODER_TIMEOUT) and was stopped together with everything it started", e.Limit), nil,
				"Raise CODER_TIMEOUT or split the task into smaller prompts")
		}
		return mcperr.New(mcperr.Timeout, "The CLI timed out: the request's deadline passed and the CLI was stopped together with everything it started", nil,
			"Allow the request more time or split the task")
	case cli.FailCanceled:
		return mcperr.New(mcperr.Canceled, "The call was cancelled; the CLI and everything it started were stopped", nil, "")
	}
	return mcperr.New(mcperr.Unavailable, "The CLI command failed to execute", errors.New(cause),
		fmt.Sprintf("Check that CODER_CLI_PATH (%s) is Codex CLI %s or later and that it can reach its model provider", s.cfg.CLIPath, cli.MinVersion))
}

// refuseHazards refuses a run in a repository configured to run commands:
// the CLI runs git there itself, outside its sandbox, as this server's user
// (for a turn's metadata, a review's diff), whatever the call's sandbox.
func refuseHazards(dir string) error {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	hz := workdir.Hazards(dir)
	if len(hz) == 0 {
		return nil
	}
	return mcperr.New(mcperr.Invalid,
		fmt.Sprintf("the Codex CLI is not run in %s: its git configuration would have the CLI's own git run commands outside the sandbox as this server's user (%s)", dir, strings.Join(hz, ", ")), nil,
		"Remove those settings (git config --unset <name>; delete or disable the hooks named), or work in a fresh clone; no CLI process was started")
}
