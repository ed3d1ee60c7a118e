package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/envconfig"
)

func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not one JSON object: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestWriteFields(t *testing.T) {
	var buf bytes.Buffer
	l, err := Open(Config{Dest: "stderr"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	l.now = func() time.Time { return time.Date(2026, 11, 24, 17, 3, 4, 5_600_000, time.FixedZone("x", 3600)) }
	d := int64(12)
	if err := l.Write(Record{Event: Outcome, Server: "streammcp", ServerVersion: "v1", Tool: "create_topic", Class: "change",
		Arguments: map[string]any{"topic": "orders", "password": "hunter2"}, Target: "kafka 127.0.0.1:9092",
		Identity: "local:alice", Client: "c/1", Session: "s", RequestID: "7", Approval: ByPerson, Outcome: "ok", DurationMS: &d}); err != nil {
		t.Fatal(err)
	}
	recs := lines(t, buf.Bytes())
	if len(recs) != 1 {
		t.Fatalf("%d lines", len(recs))
	}
	r := recs[0]
	want := map[string]any{"time": "2026-11-24T16:03:04.005Z", "event": "outcome", "server": "streammcp", "server_version": "v1",
		"tool": "create_topic", "class": "change", "target": "kafka 127.0.0.1:9092", "identity": "local:alice", "client": "c/1",
		"session": "s", "request_id": "7", "approval": "person", "dry_run": false, "outcome": "ok", "duration_ms": 12.0}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s = %v, want %v", k, r[k], v)
		}
	}
	if args := r["arguments"].(map[string]any); args["password"] != Redacted || args["topic"] != "orders" {
		t.Errorf("arguments %v", args)
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Error("secret in the record")
	}
}

func TestRedact(t *testing.T) {
	secretNames := []string{"password", "Password", "PASSWD", "db_password", "apiKey", "api_key", "API-KEY", "token", "accessToken",
		"refresh_token", "client_secret", "secretValue", "Authorization", "cookie", "sasl_password", "privateKey", "private_key",
		"credentials", "bearer", "pwd", "pass", "passphrase", "aws_access_key_id", "x-auth-token"}
	dataNames := []string{"key", "value", "topic", "query", "sql", "message", "partition", "server", "backend", "keyword", "monkey", "passenger_count"}
	args := map[string]any{}
	for _, n := range secretNames {
		args[n] = "s3cr3t-" + n
	}
	for _, n := range dataNames {
		args[n] = "data-" + n
	}
	args["nested"] = map[string]any{"token": "s3cr3t-n", "list": []any{map[string]any{"password": "s3cr3t-l", "name": "ok"}}}
	args["sql"] = "INSERT INTO users VALUES ('password', 'p4ss')" // a literal is data
	out := Redact(args)
	for _, n := range secretNames {
		if out[n] != Redacted {
			t.Errorf("%s not redacted: %v", n, out[n])
		}
	}
	for _, n := range dataNames {
		if n != "sql" && out[n] != "data-"+n {
			t.Errorf("%s redacted or changed: %v", n, out[n])
		}
	}
	if out["sql"] != args["sql"] {
		t.Error("SQL literal redacted")
	}
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "s3cr3t") {
		t.Errorf("secret left: %s", b)
	}
	if args["password"] == Redacted {
		t.Error("Redact changed its input")
	}
}

func TestFileSyncReopenAndUnwritable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l, err := Open(Config{Dest: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(Record{Event: Intent, Tool: "a"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	// Rotation: rename, reopen, and the next record goes to a new file.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Record{Event: Intent, Tool: "b"}); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if r := lines(t, old); len(r) != 1 || r[0]["tool"] != "a" {
		t.Errorf("rotated file: %s", old)
	}
	if r := lines(t, cur); len(r) != 1 || r[0]["tool"] != "b" {
		t.Errorf("new file: %s", cur)
	}
	// The directory becomes unwritable and the file goes away: reopen fails,
	// and every write after it fails rather than pretending.
	os.Remove(path)
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	if err := l.Reopen(); err == nil || !strings.Contains(err.Error(), "MCP_AUDIT_LOG") {
		t.Fatalf("reopen into an unwritable directory: %v", err)
	}
	if err := l.Write(Record{Event: Intent, Tool: "c"}); err == nil {
		t.Fatal("write after a failed reopen succeeded")
	}
}

func TestFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	l, err := Open(Config{Dest: "/dev/full"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Write(Record{Event: Intent, Tool: "x"})
	if err == nil || !strings.Contains(err.Error(), "/dev/full") {
		t.Fatalf("write to a full device: %v", err)
	}
}

func TestOpenUnwritable(t *testing.T) {
	for _, p := range []string{"/nonexistent-dir/audit.log", t.TempDir()} {
		if _, err := Open(Config{Dest: p}, nil); err == nil || !strings.Contains(err.Error(), "MCP_AUDIT_LOG") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestOff(t *testing.T) {
	l, _ := Open(Config{Dest: "off"}, nil)
	if l.Enabled() || l.Write(Record{}) != nil {
		t.Error("off must write nothing and never fail")
	}
}

func TestFromEnvRefusesStdout(t *testing.T) {
	for _, v := range []string{"stdout", "STDOUT", "/dev/stdout", "/proc/self/fd/1"} {
		r := envconfig.New(func(string) string { return v })
		FromEnv(r)
		if err := r.Err(); err == nil || !strings.Contains(err.Error(), "MCP_AUDIT_LOG") {
			t.Errorf("%s: %v", v, err)
		}
	}
	for v, want := range map[string]string{"": "stderr", "Stderr": "stderr", "OFF": "off", "/var/log/a.log": "/var/log/a.log"} {
		r := envconfig.New(func(string) string { return v })
		if c := FromEnv(r); c.Dest != want || r.Err() != nil {
			t.Errorf("%q: %q %v", v, c.Dest, r.Err())
		}
	}
}
