package conformance

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The suite's multi round-trip (SEP-2322, 2026-07-28) fixtures: a tool or
// prompt returns an input_required result, and the client retries with
// inputResponses (and the requestState echoed).

// stateKey signs request states for this process.
var stateKey = func() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}()

// sign returns payload integrity-protected for this process.
func sign(payload string) string {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// verify returns the payload of a state sign made, or an error.
func verify(state string) (string, error) {
	p, mac, ok := strings.Cut(state, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	got, err2 := base64.RawURLEncoding.DecodeString(mac)
	if !ok || err1 != nil || err2 != nil {
		return "", errors.New("requestState is malformed")
	}
	m := hmac.New(sha256.New, stateKey)
	m.Write(payload)
	if !hmac.Equal(got, m.Sum(nil)) {
		return "", errors.New("requestState failed its integrity check (tampered or from another server)")
	}
	return string(payload), nil
}

func form(msg, field, typ string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: msg, RequestedSchema: map[string]any{"type": "object",
		"properties": map[string]any{field: map[string]any{"type": typ}}, "required": []string{field}}}
}

func sampling(text string, max int) mcp.CreateMessageParams {
	return mcp.CreateMessageParams{MaxTokens: max, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: text}}}}
}

func field(res *mcp.ElicitationResult, name string) string {
	if res == nil {
		return ""
	}
	if m, ok := res.Content.(map[string]any); ok {
		return fmt.Sprint(m[name])
	}
	return ""
}

// invalid is a refused retry: mcp-go answers a handler's error as a
// JSON-RPC error (-32603), and the suite asks for an error, -32602 "or
// similar".
func invalid(err error) error {
	return fmt.Errorf("invalid params: %v", err)
}

func registerMRTR(s *server.MCPServer) {
	tool := func(name, desc string, h server.ToolHandlerFunc) {
		addTool(s, mcp.NewTool(name, mcp.WithDescription(desc)), h)
	}
	tool("test_input_required_result_elicitation", "Asks the user's name (multi round-trip).",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := server.ElicitationResponse(r.Params.InputResponses, "user_name")
			if res == nil {
				return server.NewInputRequestBuilder("").Elicit("user_name", form("What is your name?", "name", "string")).ToolResult(), nil
			}
			return mcp.NewToolResultText("Hello, " + field(res, "name") + "!"), nil
		})
	tool("test_input_required_result_sampling", "Asks the client's model (multi round-trip).",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := server.SamplingResponse(r.Params.InputResponses, "capital_question")
			if res == nil {
				return server.NewInputRequestBuilder("").Sample("capital_question", sampling("What is the capital of France?", 100)).ToolResult(), nil
			}
			text := ""
			if c, ok := res.Content.(mcp.TextContent); ok {
				text = c.Text
			}
			return mcp.NewToolResultText("The model said: " + text), nil
		})
	tool("test_input_required_result_list_roots", "Asks the client's roots (multi round-trip).",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := server.RootsResponse(r.Params.InputResponses, "client_roots")
			if res == nil {
				return server.NewInputRequestBuilder("").Roots("client_roots").ToolResult(), nil
			}
			var uris []string
			for _, root := range res.Roots {
				uris = append(uris, root.URI)
			}
			return mcp.NewToolResultText("Roots: " + strings.Join(uris, ", ")), nil
		})
	tool("test_input_required_result_request_state", "Round-trips a signed request state.",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if server.ElicitationResponse(r.Params.InputResponses, "confirm") == nil || r.Params.RequestState == "" {
				return server.NewInputRequestBuilder(sign("request-state")).Elicit("confirm", form("Please confirm", "ok", "boolean")).ToolResult(), nil
			}
			if p, err := verify(r.Params.RequestState); err != nil || p != "request-state" {
				return nil, invalid(errors.Join(err, errors.New("requestState does not belong to this tool")))
			}
			return mcp.NewToolResultText("state-ok: confirmed"), nil
		})
	tool("test_input_required_result_tampered_state", "Refuses a tampered request state.",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r.Params.RequestState == "" {
				return server.NewInputRequestBuilder(sign("tamper-check")).Elicit("confirm", form("Please confirm", "ok", "boolean")).ToolResult(), nil
			}
			if p, err := verify(r.Params.RequestState); err != nil || p != "tamper-check" {
				return nil, invalid(errors.Join(err, errors.New("requestState does not belong to this tool")))
			}
			return mcp.NewToolResultText("state-ok"), nil
		})
	tool("test_input_required_result_multi_round", "Asks twice, the state evolving.",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r.Params.RequestState == "" {
				return server.NewInputRequestBuilder(sign("round-1")).Elicit("step1", form("Step 1: What is your name?", "name", "string")).ToolResult(), nil
			}
			p, err := verify(r.Params.RequestState)
			if err != nil {
				return nil, invalid(err)
			}
			switch {
			case p == "round-1":
				name := field(server.ElicitationResponse(r.Params.InputResponses, "step1"), "name")
				return server.NewInputRequestBuilder(sign("round-2:"+name)).Elicit("step2", form("Step 2: What is your favorite color?", "color", "string")).ToolResult(), nil
			case strings.HasPrefix(p, "round-2:"):
				color := field(server.ElicitationResponse(r.Params.InputResponses, "step2"), "color")
				return mcp.NewToolResultText(fmt.Sprintf("Hello %s, your favorite color is %s.", strings.TrimPrefix(p, "round-2:"), color)), nil
			}
			return nil, invalid(errors.New("requestState does not belong to this tool"))
		})
	tool("test_input_required_result_multiple_inputs", "Asks an elicitation, a sampling and the roots at once.",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in := r.Params.InputResponses
			if r.Params.RequestState == "" || server.ElicitationResponse(in, "user_name") == nil || server.SamplingResponse(in, "greeting") == nil || server.RootsResponse(in, "client_roots") == nil {
				return server.NewInputRequestBuilder(sign("multiple")).
					Elicit("user_name", form("What is your name?", "name", "string")).
					Sample("greeting", sampling("Generate a greeting", 50)).
					Roots("client_roots").ToolResult(), nil
			}
			if _, err := verify(r.Params.RequestState); err != nil {
				return nil, invalid(err)
			}
			return mcp.NewToolResultText("All inputs received: " + field(server.ElicitationResponse(in, "user_name"), "name")), nil
		})
	tool("test_input_required_result_capabilities", "Asks only for what the client declared.",
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(r.Params.InputResponses) > 0 {
				return mcp.NewToolResultText("Received the inputs the client could give."), nil
			}
			b := server.NewInputRequestBuilder("")
			var caps *mcp.ClientCapabilities
			if info := server.RequestProtocolInfoFromContext(ctx); info != nil {
				caps = info.ClientCapabilities
			}
			n := 0
			if caps != nil && caps.Elicitation != nil {
				b.Elicit("user_name", form("What is your name?", "name", "string"))
				n++
			}
			if caps != nil && caps.Sampling != nil {
				b.Sample("greeting", sampling("Generate a greeting", 50))
				n++
			}
			if caps != nil && caps.Roots != nil {
				b.Roots("client_roots")
				n++
			}
			if n == 0 {
				return mcp.NewToolResultText("The client declared no capability to ask with."), nil
			}
			return b.ToolResult(), nil
		})
	// server-stateless's diagnostic tools (test_missing_capability is
	// answered before mcp-go: MissingCapability).
	tool("test_missing_capability", "Needs the client's sampling capability.",
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("the client declared sampling"), nil
		})
	tool("test_streaming_elicitation", "Asks the user through the response (multi round-trip), never a request of its own.",
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res := server.ElicitationResponse(r.Params.InputResponses, "user_name"); res != nil {
				return mcp.NewToolResultText("Hello, " + field(res, "name") + "!"), nil
			}
			return server.NewInputRequestBuilder("").Elicit("user_name", form("What is your name?", "name", "string")).ToolResult(), nil
		})
	tool("test_logging_tool", "Logs a message, which reaches only a client that asked for a log level.",
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "test_logging_tool", "a log message"))
			return mcp.NewToolResultText("logged"), nil
		})
	s.AddPrompt(mcp.NewPrompt("test_input_required_result_prompt", mcp.WithPromptDescription("Asks for context before answering (multi round-trip).")),
		func(_ context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res := server.ElicitationResponse(r.Params.InputResponses, "user_context")
			if res == nil {
				return server.NewInputRequestBuilder("").Elicit("user_context", form("What context should the prompt use?", "context", "string")).PromptResult(), nil
			}
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser,
				Content: mcp.TextContent{Type: "text", Text: "Context: " + field(res, "context")}}}}, nil
		})
}

// MissingCapability wraps the conformance server's HTTP handler: a
// 2026-07-28 tools/call of test_missing_capability from a client that did
// not declare sampling is refused -32021 with HTTP 400, naming the
// capability in data.requiredCapabilities, as SEP-2575 asks of a server
// that needs a capability the client did not declare.
func MissingCapability(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		var c struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				Meta struct {
					Caps map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err != nil || json.Unmarshal(body, &c) != nil || c.Method != "tools/call" || c.Params.Name != "test_missing_capability" || c.Params.Meta.Caps == nil {
			next.ServeHTTP(w, r)
			return
		}
		if _, ok := c.Params.Meta.Caps["sampling"]; ok {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": c.ID, "error": map[string]any{"code": -32021,
			"message": "test_missing_capability needs the client's sampling capability: declare it in _meta io.modelcontextprotocol/clientCapabilities",
			"data":    map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}}}})
	})
}
