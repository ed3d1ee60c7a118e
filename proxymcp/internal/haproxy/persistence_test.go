package haproxy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// What cannot be read is "unknown", saying why, never "not configured".
func TestStatePersistenceUnknown(t *testing.T) {
	for _, tc := range []struct {
		pid  int64
		want string
	}{
		{0, "did not report its pid"},
		{int64(os.Getpid()), "is not an haproxy process"},
		{1 << 30, "is not visible here"},
	} {
		sp := statePersistenceOf(tc.pid)
		if sp.Known || sp.Configured || !strings.HasPrefix(sp.Detail, "unknown: ") || !strings.Contains(sp.Detail, tc.want) {
			t.Errorf("pid %d: %+v", tc.pid, sp)
		}
	}
}

func TestStatePersistenceScan(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cfg        string
		configured bool
		loadedBy   []string
		detail     string
	}{
		{"global\n    server-state-file /var/lib/haproxy/state\ndefaults\n    load-server-state-from-file global\nbackend b\n    load-server-state-from-file none\n",
			true, []string{"defaults: global"}, "server states are reloaded from /var/lib/haproxy/state"},
		{"global\n    server-state-base /var/state\ndefaults web\n    mode http\nbackend be_x\n    load-server-state-from-file local # per backend\n",
			true, []string{"backend be_x: local"}, "reloaded from /var/state"},
		{"global\n    # server-state-file /commented\ndefaults\n    load-server-state-from-file global\n", false, []string{"defaults: global"}, "no server-state-file"},
		{"global\n    server-state-file /s\nbackend b\n    server s 1.2.3.4:80\n", false, nil, "no section has load-server-state-from-file"},
	} {
		f := filepath.Join(dir, "h.cfg")
		if err := os.WriteFile(f, []byte(tc.cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		var sp StatePersistence
		if err := sp.scan(f); err != nil {
			t.Fatal(err)
		}
		sp.conclude()
		if sp.Configured != tc.configured || !reflect.DeepEqual(sp.LoadedBy, tc.loadedBy) || !strings.Contains(sp.Detail, tc.detail) {
			t.Errorf("%q: %+v", tc.cfg, sp)
		}
	}
}
