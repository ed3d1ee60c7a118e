package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpbody"
)

// limitBody reads a request body into memory before anything else sees
// it, within max bytes and readTimeout: a declared Content-Length above max
// is refused without reading (413), a longer body is refused once max+1
// bytes arrived (413), and a body still arriving after readTimeout is
// refused (408), so that a body dribbled in cannot hold memory. The
// deadline applies to the body only: it is lifted once the body is in, so
// the long-lived answer streams are not cut.
func limitBody(next http.Handler, max int64, readTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > max {
			tooLarge(w, max)
			return
		}
		rc := http.NewResponseController(w)
		// Connections that cannot take a deadline (none of net/http's)
		// are read without one.
		_ = rc.SetReadDeadline(time.Now().Add(readTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		_ = rc.SetReadDeadline(time.Time{})
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			tooLarge(w, max)
			return
		case errors.As(err, &ne) && ne.Timeout():
			tooSlow(w, readTimeout)
			return
		case err != nil:
			http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		// The layers after this one take these bytes (httpbody.Read)
		// rather than read and buffer the body again.
		httpbody.Hold(r, body)
		next.ServeHTTP(w, r)
	})
}

// tooSlow answers 408 and closes the connection.
func tooSlow(w http.ResponseWriter, timeout time.Duration) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestTimeout)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error": map[string]any{
			"code": -32600,
			"message": fmt.Sprintf("the request body did not arrive within %s (MCP_REQUEST_READ_TIMEOUT); nothing was done. "+
				"Send the whole body at once and retry, or ask the operator to raise MCP_REQUEST_READ_TIMEOUT for slow links", timeout),
		},
	})
}

// tooLarge answers 413 with a JSON-RPC error and closes the connection, so
// that the rest of the body is never read.
func tooLarge(w http.ResponseWriter, max int64) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	w.Write(tooLargeError(nil, max))
}

// tooLargeError is the JSON-RPC error for a request above max bytes; id is
// the request's id when it could be read, else null.
func tooLargeError(id json.RawMessage, max int64) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code": -32600,
			"message": fmt.Sprintf("request is larger than %d bytes (MCP_MAX_REQUEST_BYTES); send a smaller request, "+
				"or ask the operator to raise MCP_MAX_REQUEST_BYTES", max),
		},
	})
	return b
}
