// Package logging builds the servers' slog logger: stderr only (stdout
// belongs to the stdio transport), level and format from the environment,
// and secrets redacted whatever the level.
package logging

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

// Config selects the level and format.
type Config struct {
	Level  slog.Level
	Format string // "text" or "json"
}

// Vars documents the logging variables.
var Vars = []envconfig.Var{
	{Name: "LOG_LEVEL", Default: "info", Description: "debug, info, warn or error"},
	{Name: "LOG_FORMAT", Default: "text", Description: "text or json (always written to stderr)"},
}

// FromEnv reads LOG_LEVEL and LOG_FORMAT.
func FromEnv(r *envconfig.Reader) Config {
	var c Config
	switch r.Enum("LOG_LEVEL", "info", "debug", "info", "warn", "error") {
	case "debug":
		c.Level = slog.LevelDebug
	case "warn":
		c.Level = slog.LevelWarn
	case "error":
		c.Level = slog.LevelError
	default:
		c.Level = slog.LevelInfo
	}
	c.Format = r.Enum("LOG_FORMAT", "text", "text", "json")
	return c
}

// New returns a logger writing to w (the process's stderr in production).
func New(c Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.Level, ReplaceAttr: redact}
	if c.Format == "json" {
		return slog.New(traceHandler{slog.NewJSONHandler(w, opts)})
	}
	return slog.New(traceHandler{slog.NewTextHandler(w, opts)})
}

// traceHandler adds trace_id and span_id to a record logged with a context
// (logger.InfoContext(ctx, ...)) that carries an OpenTelemetry span, so a
// log line leads to its trace.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}

// Redacted is what a secret is logged as.
const Redacted = "[REDACTED]"

// IsSecretKey reports whether an attribute or variable name names a secret.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"password", "passwd", "secret", "token", "authorization", "api_key", "apikey", "credential", "cookie"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// redact hides attributes whose key names a secret, and passwords in URLs.
func redact(_ []string, a slog.Attr) slog.Attr {
	if IsSecretKey(a.Key) {
		if a.Value.Kind() == slog.KindString && a.Value.String() == "" {
			return a
		}
		return slog.String(a.Key, Redacted)
	}
	if a.Value.Kind() == slog.KindString {
		s := a.Value.String()
		if strings.Contains(s, "://") && strings.Contains(s, "@") {
			if u, err := url.Parse(s); err == nil && u.User != nil {
				if _, has := u.User.Password(); has {
					return slog.String(a.Key, u.Redacted())
				}
			}
		}
	}
	return a
}
