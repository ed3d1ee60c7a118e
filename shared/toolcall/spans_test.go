package toolcall_test

import (
	"context"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

// The pipeline's phases have spans of their own: the person's approval
// (toolcall.approve, with the preview and the audited run inside it), on the
// session path (2025-11-25, elicitation/create) and on each leg of the
// round trip (2026-07-28, input required then the retry), and the preview
// of a confirmation-code fallback (toolcall.describe).
func TestPhaseSpans(t *testing.T) {
	accepted, none := accept, answer("")
	tests := []struct {
		name    string
		person  *answer
		version string
		cfg     toolcall.Config
		want    []string // span names, sorted, and the parent of each phase
		parents map[string]string
	}{
		{"elicitation", &accepted, "2025-11-25", toolcall.Config{},
			[]string{"toolcall.approve", "toolcall.audit", "toolcall.describe"},
			map[string]string{"toolcall.describe": "toolcall.approve", "toolcall.audit": "toolcall.approve"}},
		{"round trip", &accepted, "2026-07-28", toolcall.Config{},
			[]string{"toolcall.approve", "toolcall.approve", "toolcall.audit", "toolcall.describe"},
			map[string]string{"toolcall.describe": "toolcall.approve", "toolcall.audit": "toolcall.approve"}},
		{"confirmation code", nil, "2025-11-25", toolcall.Config{Approval: approval.Config{Fallback: approval.Confirm}},
			[]string{"toolcall.describe"}, map[string]string{"toolcall.describe": ""}},
		{"policy none", &none, "2025-11-25", toolcall.Config{Approval: approval.Config{Policy: approval.None}},
			[]string{"toolcall.audit"}, map[string]string{"toolcall.audit": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			t.Cleanup(func() { tp.Shutdown(context.Background()) })
			e := newSDKEnvOptions(t, tt.cfg, tt.person, tt.version, func(o *toolcall.Options) {
				o.Tracer = func() trace.Tracer { return tp.Tracer("test") }
			})
			e.call(t, "delete_value", map[string]any{"key": "b"})
			spans := exp.GetSpans()
			var names []string
			byID := map[trace.SpanID]string{}
			for _, s := range spans {
				names = append(names, s.Name)
				byID[s.SpanContext.SpanID()] = s.Name
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Fatalf("spans %v, want %v", names, tt.want)
			}
			for _, s := range spans {
				want, ok := tt.parents[s.Name]
				if ok && byID[s.Parent.SpanID()] != want {
					t.Errorf("%s is below %q, want %q", s.Name, byID[s.Parent.SpanID()], want)
				}
			}
		})
	}
}
