package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// limitBody caps a request body at max bytes before anything reads it into
// memory: a declared Content-Length above max is refused without reading,
// and a body of unknown length (chunked) is read up to max+1 bytes and
// refused when it is longer. Refusals are 413 with a JSON-RPC error.
func limitBody(next http.Handler, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > max {
			tooLarge(w, max)
			return
		}
		if r.ContentLength < 0 {
			// Unknown length: read it here, bounded, so that the 413 is
			// ours and not a parse error deep inside mcp-go.
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				tooLarge(w, max)
				return
			}
			if err != nil {
				http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			next.ServeHTTP(w, r)
			return
		}
		// net/http already stops at Content-Length; this is a second stop.
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
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
