package logging

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func TestSecretsNeverLogged(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		l := New(Config{Level: slog.LevelDebug, Format: format}, &buf)
		l.Debug("connecting",
			"password", "hunter2", "JWT_SECRET", "sekrit", "access_token", "tok123",
			"authorization", "Bearer abc.def", "url", "http://admin:pw123@127.0.0.1:8404/stats", "user", "alice")
		out := buf.String()
		for _, leak := range []string{"hunter2", "sekrit", "tok123", "abc.def", "pw123"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s log leaks %q: %s", format, leak, out)
			}
		}
		if !strings.Contains(out, "alice") || !strings.Contains(out, Redacted) {
			t.Errorf("%s log lost ordinary fields: %s", format, out)
		}
	}
}

func TestFromEnv(t *testing.T) {
	r := envconfig.New(func(k string) string {
		return map[string]string{"LOG_LEVEL": "WARN", "LOG_FORMAT": "json"}[k]
	})
	c := FromEnv(r)
	if c.Level != slog.LevelWarn || c.Format != "json" || r.Err() != nil {
		t.Fatalf("got %+v %v", c, r.Err())
	}
	var buf bytes.Buffer
	l := New(c, &buf)
	l.Info("hidden")
	l.Warn("shown")
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), `"msg":"shown"`) {
		t.Fatalf("level/format not honoured: %s", buf.String())
	}
}

// A record logged with a context that carries a span names the trace and
// span; without one it names neither.
func TestTraceIDs(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		l := New(Config{Level: slog.LevelInfo, Format: format}, &buf).With("server", "x")
		l.InfoContext(ctx, "with span")
		l.InfoContext(context.Background(), "without span")
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d lines: %s", format, len(lines), buf.String())
		}
		for _, want := range []string{"4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "trace_id", "span_id", "server"} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("%s: line with a span lacks %q: %s", format, want, lines[0])
			}
		}
		if strings.Contains(lines[1], "trace_id") {
			t.Errorf("%s: line without a span has a trace_id: %s", format, lines[1])
		}
	}
}
