package mcpserver

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

// The tools' argument structs. Their tags are the input schema clients
// see (shared/README.md, "How to declare a tool"); what a schema cannot
// say (an IP address, text without control characters, a session id) is
// checked by the planner or handler reading the struct.

// backendServerIn names one server.
type backendServerIn struct {
	fleetArg
	Backend string `json:"backend" jsonschema:"Backend name." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Server  string `json:"server" jsonschema:"Server name inside the backend (see list_servers)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
}

// optBackendIn narrows a listing to one backend.
type optBackendIn struct {
	fleetArg
	Backend string `json:"backend,omitempty" jsonschema:"Only this backend; omit for all." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
}

// frontendIn names one frontend.
type frontendIn struct {
	fleetArg
	Frontend string `json:"frontend" jsonschema:"Frontend name (see list_frontends)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
}

// weight is a server weight: 0-256 as a number, or a string holding a
// number or a percentage of the initial weight.
type weight string

func (weight) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "integer", Minimum: jsonschema.Ptr(0.0), Maximum: jsonschema.Ptr(256.0)},
		{Type: "string", Pattern: `^([0-9]{1,5}%|[0-9]{1,3})$`},
	}}
}

// UnmarshalJSON keeps the weight as given, a number's digits or the
// string; the planner checks it (validate.Weight), the way HAProxy reads it.
func (w *weight) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*w = weight(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*w = weight(s)
	return nil
}

// check returns the weight as HAProxy is sent it.
func (w weight) check() (string, error) { return validate.Weight("weight", string(w)) }

// textArg checks free text (no control characters, no "<<"); "" is an
// omitted optional argument.
func textArg(name, s string) error {
	if s == "" {
		return nil
	}
	_, err := validate.Text(name, s, false)
	return err
}
