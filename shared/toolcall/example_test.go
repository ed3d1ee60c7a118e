package toolcall_test

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// store is the example's back end: a key/value store that records every
// write it receives, so tests can prove a dry run or a refusal sent none.
// (It stands in for HAProxy, Kafka, Trino or the CLI in the servers.)
type store struct {
	mu     sync.Mutex
	data   map[string]int
	writes []string
}

func newStore() *store { return &store{data: map[string]int{"a": 1, "b": 2}} }

func (s *store) get(k string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[k]
	return v, ok
}

func (s *store) set(k string, v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[k] = v
	s.writes = append(s.writes, fmt.Sprintf("set %s %d", k, v))
}

func (s *store) del(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data, k)
	s.writes = append(s.writes, "del "+k)
}

func (s *store) snapshot() (map[string]int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.data), append([]string(nil), s.writes...)
}

const target = "kv memory://example"

// register declares the example's three tools the way a server does: a read
// tool with its plain handler, and two tools that change the store with a
// Planner each.
func register(p *toolcall.Pipeline, s *store, opts ...toolcall.ToolOption) {
	p.Read(mcp.NewTool("get_value",
		mcp.WithDescription("Read one key."),
		mcp.WithString("key", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v, ok := s.get(req.GetString("key", ""))
		if !ok {
			return mcp.NewToolResultError("no such key"), nil
		}
		return mcp.NewToolResultText(fmt.Sprint(v)), nil
	}, opts...)

	// set_value is a change: the store can be set back with the same tool.
	p.Change(mcp.NewTool("set_value",
		mcp.WithDescription("Set a key to an integer."),
		mcp.WithString("key", mcp.Required(), mcp.Pattern("^[a-z]{1,16}$")),
		mcp.WithNumber("value", mcp.Required(), mcp.Min(0), mcp.Max(1000)),
	), toolcall.Change, func(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
		// The arguments were validated against the schema; decode them once
		// and close over the decoded values.
		key := req.GetString("key", "")
		value := req.GetInt("value", 0)
		cmd := fmt.Sprintf("SET %s %d", key, value)
		return toolcall.Plan{
			Class:    toolcall.Change,
			Target:   target,
			Commands: []string{cmd},
			Describe: func(ctx context.Context) (toolcall.Preview, error) {
				old, ok := s.get(key)
				if !ok {
					return toolcall.Preview{Summary: fmt.Sprintf("Create key %s with value %d in %s.", key, value, target),
						State: map[string]any{"exists": false}, Effect: "the key exists with the new value"}, nil
				}
				return toolcall.Preview{Summary: fmt.Sprintf("Change key %s from %d to %d in %s.", key, old, value, target),
					State: map[string]any{"exists": true, "value": old}, Effect: "the key holds the new value"}, nil
			},
			Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
				s.set(key, value)
				return mcp.NewToolResultText("ok: " + cmd), nil
			},
		}, nil
	}, opts...)

	// delete_value is destructive: the old value cannot be recovered.
	p.Change(mcp.NewTool("delete_value",
		mcp.WithDescription("Delete a key."),
		mcp.WithString("key", mcp.Required()),
	), toolcall.Destructive, func(ctx context.Context, req mcp.CallToolRequest) (toolcall.Plan, error) {
		key := req.GetString("key", "")
		if key == "" {
			return toolcall.Plan{}, mcperr.Invalidf("argument \"key\" is empty; name the key to delete")
		}
		return toolcall.Plan{
			Class:    toolcall.Destructive,
			Target:   target,
			Commands: []string{"DEL " + key},
			Describe: func(ctx context.Context) (toolcall.Preview, error) {
				v, ok := s.get(key)
				if !ok {
					return toolcall.Preview{}, mcperr.NotFoundf("key %s does not exist in %s", key, target)
				}
				return toolcall.Preview{
					Summary:      fmt.Sprintf("Delete key %s (value %d) from %s. The value cannot be recovered.", key, v, target),
					State:        map[string]any{"value": v},
					Effect:       "the key no longer exists",
					Precondition: fmt.Sprintf("value=%d", v), // approval is for deleting this value
				}, nil
			},
			Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
				s.del(key)
				return mcp.NewToolResultText("deleted " + key), nil
			},
		}, nil
	}, opts...)
}
