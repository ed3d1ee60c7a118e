// Package codertest is codermcp's test back end: a local model endpoint that
// speaks the Responses API (server-sent events) the way the real Codex CLI
// expects, scripted per prompt, telling an Observer what it was sent; plus
// a writer for a throwaway CODEX_HOME pointing the CLI at it. Tests and the
// playground share it; what only tests use is in
// codertest/harness.
//
// Scripting: the endpoint looks at the last user message of each request.
//
//	[[401]]           answer 401 invalid_api_key (an authentication failure)
//	[[hang]]          never answer (until the client goes away)
//	[[shell:CMD]]     ask the CLI to run CMD with its exec_command tool, then
//	                  answer "ran: <output>" once the CLI sends the output back
//	[[escalate:CMD]]  as shell, but the model asks to run CMD outside the
//	                  sandbox and says why (EscalationReason): under the
//	                  on-request approval policy the CLI asks a person
//	[[burst:N]]       ask for N commands (echo burst-i) in one response, then
//	                  answer "ran N commands": a flood of CLI events
//	[[reply:TEXT]]    answer TEXT
//	[[gate:NAME]]     wait until the Observer's gate NAME opens (or the
//	                  client goes away), then answer "through gate NAME":
//	                  runs held open at will
//	anything else     answer Prefix + "reply to: <prompt>"
//
// A request for the model MissingModel is answered 400 model_not_found.
package codertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MissingModel is a model id the endpoint rejects as unknown.
const MissingModel = "missing-model"

// Model is the model id the endpoint serves (any other id except
// MissingModel is served too).
const Model = "codertest-model"

// Request is one POST /v1/responses the endpoint received.
type Request struct {
	Model    string
	Effort   string   // reasoning.effort, when the CLI sent one
	ThreadID string   // the CLI's session-id header
	Prompt   string   // text of the last user message
	Texts    []string // text of every message in the input, in order
	Outputs  []string // function_call_output items
	Images   []string // input_image parts of the user messages (their image_url: data URLs)
	At       time.Time
}

// Endpoint is a running fake model provider.
type Endpoint struct {
	// Prefix starts every default reply (the playground labels its answers).
	Prefix string

	srv   *http.Server
	ln    net.Listener
	stop  chan struct{}
	once  sync.Once
	watch Observer

	mu    sync.Mutex
	calls int
}

// Observer is told of every request the endpoint receives, and holds the
// [[gate:NAME]] requests: the tests' record of what the CLI sent.
type Observer interface {
	Began(Request) // a request arrived
	Ended()        // its answer is written, or its client went away
	// Gate is what a [[gate:NAME]] request waits on before it is answered.
	Gate(name string) <-chan struct{}
}

// Start serves an endpoint on addr ("127.0.0.1:0" for any free port),
// reporting to watch when it is not nil; without one, a [[gate:NAME]]
// request waits until its client goes away.
func Start(addr string, watch Observer) (*Endpoint, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{ln: ln, stop: make(chan struct{}), watch: watch}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", e.responses)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"not served by codertest"}}`, http.StatusNotFound)
	})
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go e.srv.Serve(ln)
	return e, nil
}

// URL is the base URL of the endpoint, e.g. http://127.0.0.1:41234.
func (e *Endpoint) URL() string { return "http://" + e.ln.Addr().String() }

// Close stops serving; hanging requests are released.
func (e *Endpoint) Close() error {
	e.once.Do(func() { close(e.stop) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		return e.srv.Close()
	}
	return nil
}

type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

var directiveRE = regexp.MustCompile(`\[\[(401|hang|shell|escalate|reply|burst|gate)(?::((?s).*?))?\]\]`)

// EscalationReason is the reason an [[escalate:CMD]] request gives.
const EscalationReason = "codertest needs this command to run outside the sandbox"

func (e *Endpoint) responses(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model     string      `json:"model"`
		Input     []inputItem `json:"input"`
		Reasoning *struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "", "cannot decode request: "+err.Error())
		return
	}
	req := Request{Model: body.Model, ThreadID: r.Header.Get("session-id"), At: time.Now()}
	if body.Reasoning != nil {
		req.Effort = body.Reasoning.Effort
	}
	if req.ThreadID == "" {
		req.ThreadID = r.Header.Get("thread-id")
	}
	for _, it := range body.Input {
		switch it.Type {
		case "message", "":
			req.Images = append(req.Images, messageImages(it.Content)...)
			text := messageText(it.Content)
			req.Texts = append(req.Texts, text)
			if it.Role == "user" && !strings.HasPrefix(strings.TrimSpace(text), "<environment_context>") {
				req.Prompt = text
			}
		case "function_call_output":
			req.Outputs = append(req.Outputs, outputText(it.Output))
		}
	}
	e.mu.Lock()
	e.calls++
	n := e.calls
	e.mu.Unlock()
	if e.watch != nil {
		e.watch.Began(req)
		defer e.watch.Ended()
	}

	if body.Model == MissingModel {
		writeError(w, http.StatusBadRequest, "model_not_found", "model",
			fmt.Sprintf("The requested model '%s' does not exist.", body.Model))
		return
	}
	kind, arg := "", ""
	if m := directiveRE.FindStringSubmatch(req.Prompt); m != nil {
		kind, arg = m[1], m[2]
	}
	switch kind {
	case "401":
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "", "Incorrect API key provided.")
	case "hang":
		select {
		case <-r.Context().Done():
		case <-e.stop:
		}
	case "shell", "escalate":
		if len(req.Outputs) == 0 {
			call := map[string]any{"cmd": arg}
			if kind == "escalate" {
				// Both spellings: sandbox_permissions (recent CLIs) and
				// with_escalated_permissions (older ones).
				call["sandbox_permissions"] = "require_escalated"
				call["with_escalated_permissions"] = true
				call["justification"] = EscalationReason
			}
			args, _ := json.Marshal(call)
			e.stream(w, n, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n),
				"call_id": fmt.Sprintf("call_%d", n), "name": "exec_command", "arguments": string(args)})
			return
		}
		e.stream(w, n, message(n, "ran: "+strings.TrimSpace(req.Outputs[len(req.Outputs)-1])))
	case "burst":
		count, _ := strconv.Atoi(arg)
		if len(req.Outputs) == 0 {
			var items []map[string]any
			for i := range count {
				args, _ := json.Marshal(map[string]any{"cmd": fmt.Sprintf("echo burst-%d", i)})
				items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i),
					"call_id": fmt.Sprintf("call_%d_%d", n, i), "name": "exec_command", "arguments": string(args)})
			}
			e.stream(w, n, items...)
			return
		}
		e.stream(w, n, message(n, fmt.Sprintf("ran %d commands", len(req.Outputs))))
	case "gate":
		var g <-chan struct{}
		if e.watch != nil {
			g = e.watch.Gate(arg)
		}
		select {
		case <-g:
			e.stream(w, n, message(n, "through gate "+arg))
		case <-r.Context().Done():
		case <-e.stop:
		}
	case "reply":
		e.stream(w, n, message(n, arg))
	default:
		e.stream(w, n, message(n, e.Prefix+"reply to: "+req.Prompt))
	}
}

func message(n int, text string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", n),
		"content": []map[string]any{{"type": "output_text", "text": text}}}
}

// stream writes one Responses-API reply carrying items.
func (e *Endpoint) stream(w http.ResponseWriter, n int, items ...map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	id := fmt.Sprintf("resp_%d", n)
	send := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	send("response.created", map[string]any{"response": map[string]any{"id": id}})
	for _, item := range items {
		send("response.output_item.done", map[string]any{"item": item})
	}
	send("response.completed", map[string]any{"response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 10, "input_tokens_details": nil, "output_tokens": 3, "output_tokens_details": nil, "total_tokens": 13}}})
}

func writeError(w http.ResponseWriter, status int, code, param, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	e := map[string]any{"message": msg, "type": "invalid_request_error", "code": code}
	if param != "" {
		e["param"] = param
	}
	json.NewEncoder(w).Encode(map[string]any{"error": e})
}

func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func messageImages(raw json.RawMessage) []string {
	var parts []contentPart
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.Type == "input_image" {
			out = append(out, p.ImageURL)
		}
	}
	return out
}

func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}
