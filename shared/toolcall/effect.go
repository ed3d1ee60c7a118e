package toolcall

import (
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// Effect declares what a tool's calls can do, once: the MCP annotations
// clients read and, for a tool that can change a back end, the highest
// class the pipeline may give one of its calls. Annotations are derived
// from it so that they cannot contradict the class: readOnlyHint is
// Most == Read, destructiveHint holds for every Destructive tool.
type Effect struct {
	// Title is the tool's display title (the spec's "title").
	Title string
	// Most is the highest class a call can have: Read for a tool that
	// changes nothing (AddRead), Change or Destructive for one with a
	// planner (AddChange).
	Most Class
	// Destructive sets destructiveHint on a Change tool whose updates a
	// client should still treat as destructive (streammcp's writes: a
	// produced message cannot be taken back). Implied by Most ==
	// Destructive; refused on a Read tool.
	Destructive bool
	// Idempotent: calling again with the same arguments has no further
	// effect (idempotentHint).
	Idempotent bool
	// OpenWorld: the tool reaches things outside the server's own closed
	// domain (openWorldHint).
	OpenWorld bool
	// TitleAnnotation repeats Title in annotations.title, for clients that
	// read only the older field (codermcp's surface carries both).
	TitleAnnotation bool
}

// annotate sets tool's title and annotations from e. An Effect that
// contradicts itself is a programming error in the server, reported when
// the tool is registered.
func (e Effect) annotate(tool *mcp.Tool) error {
	if e.Most < Read || e.Most > Destructive {
		return fmt.Errorf("tool %s: Effect.Most is %s, not read, change or destructive", tool.Name, e.Most)
	}
	if e.Most == Read && e.Destructive {
		return fmt.Errorf("tool %s: a read tool cannot be destructive (Effect.Most is read, Effect.Destructive is set)", tool.Name)
	}
	tool.Title = e.Title
	a := mcp.ToolAnnotation{
		ReadOnlyHint:    mcp.ToBoolPtr(e.Most == Read),
		DestructiveHint: mcp.ToBoolPtr(e.Most == Destructive || e.Destructive),
		IdempotentHint:  mcp.ToBoolPtr(e.Idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(e.OpenWorld),
	}
	if e.TitleAnnotation {
		a.Title = e.Title
	}
	tool.Annotations = a
	return nil
}
