package httpauth

import (
	"encoding/json"
	"net/http"
	"strings"
)

const (
	protectedResourcePath   = "/.well-known/oauth-protected-resource"
	authorizationServerPath = "/.well-known/oauth-authorization-server"
)

// protectedPaths are the endpoints Protect guards; each has its own RFC 9728
// metadata document at protectedResourcePath + path.
var protectedPaths = []string{"/mcp", "/sse", "/message"}

// Register mounts the metadata and (proxy mode) flow endpoints on mux.
func (l *Layer) Register(mux *http.ServeMux) {
	mux.Handle(protectedResourcePath, cors(http.HandlerFunc(l.serveResourceMetadata)))
	mux.Handle(protectedResourcePath+"/", cors(http.HandlerFunc(l.serveResourceMetadata)))
	if l.proxy != nil {
		mux.Handle(authorizationServerPath, cors(http.HandlerFunc(l.serveServerMetadata)))
		mux.Handle(registerPath, cors(http.HandlerFunc(l.proxy.register)))
		mux.HandleFunc(authorizePath, l.proxy.authorize)
		mux.HandleFunc(callbackPath, l.proxy.callback)
		mux.Handle(tokenPath, cors(http.HandlerFunc(l.proxy.token)))
	}
}

// ResourceMetadata is the RFC 9728 protected-resource metadata document.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is the RFC 8414 authorisation-server metadata of proxy mode.
type ServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	ScopesSupported                            []string `json:"scopes_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

// ResourceMetadata returns the metadata of the resource at path ("" for the
// server itself, or one of /mcp, /sse, /message).
func (l *Layer) ResourceMetadata(path string) ResourceMetadata {
	m := ResourceMetadata{
		Resource:               l.cfg.BaseURL + path,
		AuthorizationServers:   []string{},
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        l.scopes(),
	}
	switch {
	case l.proxy != nil:
		m.AuthorizationServers = []string{l.cfg.BaseURL}
	case l.cfg.Issuer != "":
		m.AuthorizationServers = []string{l.cfg.Issuer}
	}
	return m
}

// scopes are the scopes a client should ask for.
func (l *Layer) scopes() []string {
	switch {
	case l.proxy != nil:
		return []string{"openid", "profile", "email", "offline_access"}
	case l.cfg.Provider == ProviderHMAC:
		return nil
	case l.cfg.Provider == ProviderAzure:
		// Azure issues tokens for a custom API only for its ".default" (or a
		// named) scope; plain OIDC scopes would yield a Graph token.
		api := l.cfg.Audience
		if !strings.Contains(api, "://") {
			api = "api://" + api
		}
		return []string{api + "/.default", "openid", "profile", "offline_access"}
	}
	return []string{"openid", "profile", "email"}
}

func (l *Layer) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, protectedResourcePath)
	if path != "" && !containsString(protectedPaths, path) {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, l.ResourceMetadata(path))
}

func (l *Layer) serveServerMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET")
		return
	}
	b := l.cfg.BaseURL
	writeJSON(w, http.StatusOK, ServerMetadata{
		Issuer:                                     b,
		AuthorizationEndpoint:                      b + authorizePath,
		TokenEndpoint:                              b + tokenPath,
		RegistrationEndpoint:                       b + registerPath,
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		ScopesSupported:                            l.scopes(),
		AuthorizationResponseIssParameterSupported: true,
	})
}

// cors lets browser-based MCP clients read metadata and use the
// registration and token endpoints, which carry no ambient credentials.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "method not allowed; use " + allow})
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
