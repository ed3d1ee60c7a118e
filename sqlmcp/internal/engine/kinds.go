package engine

import "github.com/mcpfleet/mcpfleet/shared/errkind"

// Kind classifies a failure by what the caller can do about it (errkind's
// kinds). The MCP server maps each kind onto its tool errors; the
// command-line client prints the error's text.
type Kind = errkind.Kind

// The kinds as the engine uses them.
const (
	// Internal is a bug or an answer the client does not understand.
	Internal = errkind.Internal
	// Invalid: the caller's SQL, name or setting is wrong; nothing ran.
	Invalid = errkind.Invalid
	// NotFound: the named catalog, schema, table or column does not exist.
	NotFound = errkind.NotFound
	// Unavailable: the engine could not be reached or refused service.
	Unavailable = errkind.Unavailable
	// Timeout: the query ran out of time.
	Timeout = errkind.Timeout
	// Permission: authentication or authorisation failed.
	Permission = errkind.Permission
	// Canceled: the caller cancelled the query.
	Canceled = errkind.Canceled
)

// Error is a classified failure: what was attempted (Op), why it failed
// (Err, may be nil) and what to do about it (Hint), rendered
// "op: cause. hint" on one line.
type Error = errkind.Error

// KindOf classifies err: an *Error keeps its kind; context, network and
// permission errors are recognised; anything else is Internal.
func KindOf(err error) Kind { return errkind.KindOf(err) }

// newError returns a classified error.
func newError(kind Kind, op string, err error, hint string) *Error {
	return errkind.New(kind, op, err, hint)
}
