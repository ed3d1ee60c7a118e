package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/httpbody"
	"github.com/mcpfleet/mcpfleet/shared/jsonscan"
)

// SEP-2164: a resources/read of a URI that names no resource SHOULD be
// answered with the URI in the error's data ({"uri": ...}); the code is
// -32602 on 2026-07-28 and -32002 before. mcp-go v1.2.1 gives the right
// code per protocol version but no data, and offers no hook to add it (its
// requestError is internal; the templates it matches are not exported, so
// the gate cannot tell an unknown URI before it). So mcp-go answers as
// always, and its not-found answer — recognised by its code and its exact
// message for the very URI asked — gets data.uri on its way out: on
// stdio in the gate (readResource), over HTTP in resourceURIs.

// resourceRead returns the URI of a resources/read request; false for any
// other message. Over HTTP it sees every request body, so a message whose
// method the byte scanner reads as plainly another is passed over without
// decoding it; anything else is decoded as before.
func resourceRead(msg []byte) (string, bool) {
	var f [jsonscan.MaxFields]jsonscan.Field
	if n, ok := jsonscan.TopFields(msg, &f); ok {
		// In any case, as encoding/json fills the struct below.
		method := jsonscan.Member(f[:n], "method", true)
		if method == nil {
			return "", false // a response or no message
		}
		if name, plain := jsonscan.PlainString(method); plain && string(name) != string(mcp.MethodResourcesRead) {
			return "", false
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != string(mcp.MethodResourcesRead) || len(m.ID) == 0 {
		return "", false
	}
	return m.Params.URI, true
}

// notFoundAnswer is the shape of mcp-go's error answer, members in its
// order.
type notFoundAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

// withResourceURI returns answer — mcp-go's answer to a resources/read of
// uri — with data {"uri": uri} added when it is mcp-go's resource-not-found
// error; every other answer is returned unchanged.
func withResourceURI(answer []byte, uri string) []byte {
	if !bytes.Contains(answer, []byte(`"error"`)) {
		return answer
	}
	var a notFoundAnswer
	if json.Unmarshal(answer, &a) != nil || a.Error == nil || len(a.Error.Data) > 0 ||
		(a.Error.Code != mcp.INVALID_PARAMS && a.Error.Code != mcp.RESOURCE_NOT_FOUND) ||
		a.Error.Message != fmt.Sprintf("handler not found for resource URI '%s': %v", uri, server.ErrResourceNotFound) {
		return answer
	}
	a.Error.Data, _ = json.Marshal(map[string]string{"uri": uri})
	out, err := json.Marshal(a)
	if err != nil {
		return answer
	}
	return out
}

// resourceURIs is withResourceURI over HTTP, in front of mcp-go's
// streamable handler: the JSON answer to a resources/read is held until
// it is complete, then passed on, with data.uri when it is the not-found
// error. Every other request, and an answer streamed as SSE, passes
// through untouched.
func resourceURIs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := httpbody.Message(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		uri, ok := resourceRead(body)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		hw := &heldJSON{ResponseWriter: w}
		next.ServeHTTP(hw, r)
		if hw.held == nil {
			return
		}
		out := withResourceURI(bytes.TrimSpace(hw.held.Bytes()), uri)
		w.Header().Del("Content-Length")
		w.WriteHeader(hw.status)
		w.Write(out)
	})
}

// heldJSON holds a JSON answer back (held) and passes anything else
// through as it comes.
type heldJSON struct {
	http.ResponseWriter
	status int
	held   *bytes.Buffer // nil: passing through
	passed bool
}

func (h *heldJSON) WriteHeader(status int) {
	if h.held != nil || h.passed {
		return
	}
	if ct := h.Header().Get("Content-Type"); status == http.StatusOK || status >= 400 {
		if mt, _, _ := bytes.Cut([]byte(ct), []byte(";")); string(bytes.TrimSpace(mt)) == "application/json" {
			h.status, h.held = status, &bytes.Buffer{}
			return
		}
	}
	h.passed = true
	h.ResponseWriter.WriteHeader(status)
}

func (h *heldJSON) Write(p []byte) (int, error) {
	if h.held == nil && !h.passed {
		h.WriteHeader(http.StatusOK)
	}
	if h.held != nil {
		return h.held.Write(p)
	}
	return h.ResponseWriter.Write(p)
}

// Flush passes a flush on only while nothing is held (an SSE answer).
func (h *heldJSON) Flush() {
	if h.held != nil {
		return
	}
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
