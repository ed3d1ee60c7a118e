package audit

import "strings"

// Redacted replaces the value of a secret-named field.
const Redacted = "[redacted]"

// secretWords are the name fragments that make a field a secret. Values in
// other fields (SQL string literals, message bodies) are the user's data and
// stay.
var secretWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key",
	"credential", "private_key", "privatekey", "authorization", "auth_header", "cookie",
	"sasl", "bearer", "session_key", "access_key", "accesskey",
}

// IsSecretName reports whether a field called name holds a secret.
func IsSecretName(name string) bool {
	n := strings.ToLower(name)
	n = strings.NewReplacer("-", "_", " ", "_").Replace(n)
	compact := strings.ReplaceAll(n, "_", "")
	for _, w := range secretWords {
		if strings.Contains(n, w) || strings.Contains(compact, strings.ReplaceAll(w, "_", "")) {
			return true
		}
	}
	// A bare "key" is a Kafka message key or a map key: data, not a secret.
	return n == "pwd" || n == "pass"
}

// Redact returns a copy of args with the value of every secret-named field,
// at any depth, replaced by Redacted.
func Redact(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		if IsSecretName(k) {
			out[k] = Redacted
			continue
		}
		out[k] = redactValue(v)
	}
	return out
}

func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return Redact(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = redactValue(e)
		}
		return out
	default:
		return v
	}
}
