package logging

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

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
