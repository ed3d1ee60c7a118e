// Package mcperr maps the error kinds of shared/errkind onto MCP: a failing
// tool returns a result with isError: true and a one-line, actionable
// message; protocol problems stay JSON-RPC errors (mcp-go produces those
// itself). The kinds and the error type are errkind's, under the names the
// servers have always used.
package mcperr

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/errkind"
)

// Kind classifies a failure by what the user can do about it.
type Kind = errkind.Kind

// The kinds; see errkind.
const (
	Internal    = errkind.Internal
	Invalid     = errkind.Invalid
	NotFound    = errkind.NotFound
	Unavailable = errkind.Unavailable
	Timeout     = errkind.Timeout
	Permission  = errkind.Permission
	Conflict    = errkind.Conflict
	Canceled    = errkind.Canceled
)

// Error is a classified error: what was attempted (Op), why it failed (Err),
// and what to do about it (Hint).
type Error = errkind.Error

// New returns a classified error.
func New(kind Kind, op string, err error, hint string) *Error {
	return errkind.New(kind, op, err, hint)
}

// Invalidf returns an Invalid error whose message is formatted.
func Invalidf(format string, args ...any) *Error {
	return errkind.Invalidf(format, args...)
}

// NotFoundf returns a NotFound error whose message is formatted.
func NotFoundf(format string, args ...any) *Error {
	return errkind.NotFoundf(format, args...)
}

// KindOf classifies err; see errkind.KindOf.
func KindOf(err error) Kind { return errkind.KindOf(err) }

// Wrap classifies err (keeping an existing kind) and adds what was being
// done and a hint. It returns nil for a nil err.
func Wrap(err error, op, hint string) error { return errkind.Wrap(err, op, hint) }

// Message returns the one-line text a user sees for err, adding a generic
// hint by kind when the error carries none.
func Message(err error) string { return errkind.Message(err) }

// ToolResult turns err into an MCP tool result with isError: true.
func ToolResult(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(Message(err))
}
