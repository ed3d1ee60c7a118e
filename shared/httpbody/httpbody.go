// Package httpbody hands a request body already in memory from one
// reader to the next without copying it: serve's body limit reads it
// once, and each layer after it that looks at the message (serve's
// method aliases and resource URIs, the tasks keeper) takes the same
// bytes. It is a package of its own so that serve and tasks share it
// without importing each other.
package httpbody

import (
	"bytes"
	"io"
	"net/http"
)

// held is a request body in memory. Whoever changes the message puts a
// new one in place (Hold), so each layer sees the message the next one
// will run.
type held struct {
	*bytes.Reader
	b []byte
}

func (*held) Close() error { return nil }

// Hold makes b the body of r, in memory, with its length.
func Hold(r *http.Request, b []byte) {
	r.Body = &held{Reader: bytes.NewReader(b), b: b}
	r.ContentLength = int64(len(b))
}

// Message returns the body of a POST, the one request that carries a
// JSON-RPC message, as Read does. ok is false for any other request and
// for a body that could not be read, which the body limit in front of
// every layer has answered.
func Message(r *http.Request) (body []byte, ok bool) {
	if r.Method != http.MethodPost || r.Body == nil {
		return nil, false
	}
	body, err := Read(r)
	return body, err == nil
}

// Read returns r's body and leaves it for the next reader. A body in
// memory (Hold) not read yet is returned as is: the bytes are shared, do
// not modify them. Any other body is read (what arrived before an error
// too) and left in memory.
func Read(r *http.Request) ([]byte, error) {
	if h, ok := r.Body.(*held); ok && h.Len() == len(h.b) {
		return h.b, nil // not read yet: these are the bytes it reads
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = &held{Reader: bytes.NewReader(body), b: body}
	return body, err
}
