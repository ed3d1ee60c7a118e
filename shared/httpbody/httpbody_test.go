package httpbody_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/httpbody"
)

// TestReadLeavesTheBody: every reader gets the whole body, a held one
// without a copy, and whoever reads r.Body after them too.
func TestReadLeavesTheBody(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	held := []byte(msg)
	other := []byte(`{"other":1}`)
	for _, tc := range []struct {
		name    string
		prepare func(w http.ResponseWriter, r *http.Request)
		want    string
		err     bool
		shared  []byte // the bytes Read must return without a copy
	}{
		{"held", func(_ http.ResponseWriter, r *http.Request) { httpbody.Hold(r, held) }, msg, false, held},
		{"replaced", func(_ http.ResponseWriter, r *http.Request) {
			httpbody.Hold(r, held)
			httpbody.Hold(r, other)
		}, string(other), false, other},
		{"held, partly read", func(_ http.ResponseWriter, r *http.Request) {
			httpbody.Hold(r, held)
			r.Body.Read(make([]byte, 5))
		}, msg[5:], false, nil},
		{"not held", func(http.ResponseWriter, *http.Request) {}, msg, false, nil},
		{"read fails", func(w http.ResponseWriter, r *http.Request) { r.Body = http.MaxBytesReader(w, r.Body, 10) }, msg[:10], true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(msg))
			tc.prepare(httptest.NewRecorder(), r)
			first, err := httpbody.Read(r)
			if string(first) != tc.want || (err != nil) != tc.err {
				t.Fatalf("Read = %q, %v; want %q, error %v", first, err, tc.want, tc.err)
			}
			var mbe *http.MaxBytesError
			if tc.err && !errors.As(err, &mbe) {
				t.Errorf("error %v, want the reader's own", err)
			}
			second, err := httpbody.Read(r)
			if string(second) != tc.want || err != nil {
				t.Fatalf("second Read = %q, %v; want %q", second, err, tc.want)
			}
			if tc.shared != nil && &first[0] != &tc.shared[0] {
				t.Errorf("the held bytes were copied")
			}
			if &first[0] != &second[0] {
				t.Errorf("the second Read copied the bytes again")
			}
			if rest, _ := io.ReadAll(r.Body); string(rest) != tc.want {
				t.Errorf("the next reader got %q, want %q", rest, tc.want)
			}
		})
	}
}
