package audit

import (
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Redacted replaces a secret: the value of a secret-named field, and every
// other spelling of that value anywhere in a record.
const Redacted = "[redacted]"

// secretWords are the name fragments that make a field a secret. Values in
// other fields (SQL string literals, message bodies) are the user's data and
// stay, unless they repeat a secret's value.
var secretWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key",
	"credential", "private_key", "privatekey", "authorization", "auth_header", "cookie",
	"sasl", "jaas", "bearer", "session_key", "access_key", "accesskey", "keystore_key",
	"signing_key", "encryption_key", "client_key", "master_key", "ssh_key", "basic_auth", "proxy_auth",
}

// IsSecretName reports whether a field called name holds a secret:
// "password", "ssl.key.password", "sasl.jaas.config", "X-Api-Key",
// "clientSecret", "Authorization", "Cookie"...
func IsSecretName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(n)
	compact := strings.ReplaceAll(n, "_", "")
	for _, w := range secretWords {
		if strings.Contains(n, w) || strings.Contains(compact, strings.ReplaceAll(w, "_", "")) {
			return true
		}
	}
	// A bare "key" is a Kafka message key or a map key: data, not a secret.
	return n == "pwd" || n == "pass" || n == "auth"
}

// redactArgs returns a copy of args without secrets, and the secret values
// it removed, so that the rest of the record can be scrubbed of them.
// Secrets are found by shape, at any depth:
//   - a secret-named key ({"password": "…"}, headers {"Authorization": "…"},
//     configs {"sasl.jaas.config": "…"}): its whole value;
//   - a name/value pair naming a secret ({"name": "ssl.key.password",
//     "value": "…"}, ["Cookie", "…"]): the value;
//   - in any string, a secret-named assignment or header line
//     ("sasl.jaas.config=…", `password="…"`, "Authorization: Bearer …") and
//     a URL's password ("https://user:pw@host"): the value, which the
//     scrub then removes from the argument too.
func redactArgs(args map[string]any) (map[string]any, []string) {
	var found []string
	if args == nil {
		return map[string]any{}, nil
	}
	out, _ := redactValue(args, &found).(map[string]any)
	return out, found
}

func redactValue(v any, found *[]string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		pairValue := ""
		if n, ok := pairName(t); ok && IsSecretName(n) {
			pairValue = valueKey(t)
		}
		for k, e := range t {
			if IsSecretName(k) || k == pairValue {
				collect(e, found)
				out[k] = Redacted
				continue
			}
			out[k] = redactValue(e, found)
		}
		return out
	case []any:
		out := make([]any, len(t))
		if len(t) == 2 {
			if n, ok := t[0].(string); ok && bareName.MatchString(n) && IsSecretName(n) {
				collect(t[1], found)
				return []any{n, Redacted}
			}
		}
		for i, e := range t {
			out[i] = redactValue(e, found)
		}
		return out
	case string:
		embedded(t, found)
	}
	return v
}

// pairName is the name of a {"name": …, "value": …} object.
func pairName(m map[string]any) (string, bool) {
	if valueKey(m) == "" {
		return "", false
	}
	for _, k := range []string{"name", "key", "header", "config", "property", "field"} {
		if n, ok := m[k].(string); ok {
			return n, true
		}
	}
	return "", false
}

func valueKey(m map[string]any) string {
	for _, k := range []string{"value", "val", "data"} {
		if _, ok := m[k]; ok {
			return k
		}
	}
	return ""
}

var (
	// "Authorization: Bearer …" on a line of its own: the rest of the line.
	headerLine = regexp.MustCompile(`(?m)^\s*([A-Za-z0-9_.\-]+)\s*:\s*(\S[^\r\n]*)`)
	// name=value, name="value" or name='value' anywhere: JAAS options,
	// connection strings, query strings, properties, command flags.
	// A value quoted with \" is one spelled inside JSON text.
	assignment  = regexp.MustCompile(`([A-Za-z0-9_.\-]+)\s*=\s*(?:\\"(.*?)\\"|"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s;&,"'\\]+))`)
	bareName    = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)
	urlPassword = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^/@\s:]*:([^/@\s]+)@`)
)

// embedded collects the secrets a string carries by its own shape: the
// value of a secret-named header line or assignment, a URL's password.
func embedded(s string, found *[]string) {
	if !strings.ContainsAny(s, "=:") {
		return
	}
	for _, m := range headerLine.FindAllStringSubmatch(s, -1) {
		if IsSecretName(m[1]) {
			*found = append(*found, strings.TrimSpace(m[2]))
		}
	}
	for _, m := range assignment.FindAllStringSubmatch(s, -1) {
		if IsSecretName(m[1]) {
			*found = append(*found, m[2]+m[3]+m[4]+m[5])
		}
	}
	for _, m := range urlPassword.FindAllStringSubmatch(s, -1) {
		*found = append(*found, m[1])
		if p, err := url.PathUnescape(m[1]); err == nil && p != m[1] {
			*found = append(*found, p)
		}
	}
}

// collect adds every value below a secret: strings, and numbers and
// booleans as JSON spells them.
func collect(v any, found *[]string) {
	switch t := v.(type) {
	case nil:
	case bool:
		// One bit is no secret, and "true" scrubbed from every field would
		// blank unrelated text.
	case string:
		*found = append(*found, t)
		embedded(t, found)
	case map[string]any:
		for _, e := range t {
			collect(e, found)
		}
		if b, err := json.Marshal(t); err == nil {
			*found = append(*found, string(b))
		}
	case []any:
		for _, e := range t {
			collect(e, found)
		}
	default:
		if b, err := json.Marshal(t); err == nil {
			*found = append(*found, string(b))
		}
	}
}

// scrubber replaces every spelling of the secrets in a string: as is, as
// JSON escapes it inside a string (with and without HTML escaping), as Go
// quotes it, and URL-encoded (query and path).
func scrubber(secrets []string) *strings.Replacer {
	seen := map[string]bool{}
	var olds []string
	add := func(s string) {
		if s != "" && !seen[s] && s != Redacted {
			seen[s] = true
			olds = append(olds, s)
		}
	}
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		add(s)
		// A multi-line secret (a PEM key) also as an error message folds
		// it onto one line, and line by line.
		add(strings.Join(strings.Fields(s), " "))
		if strings.ContainsAny(s, "\r\n") {
			for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
				add(strings.TrimSpace(l))
			}
		}
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		add(strings.ToLower(url.QueryEscape(s)))
		q := strconv.Quote(s)
		add(q[1 : len(q)-1])
		if b, err := json.Marshal(s); err == nil {
			add(string(b[1 : len(b)-1]))
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(s) == nil {
			j := strings.TrimSuffix(b.String(), "\n")
			add(j[1 : len(j)-1])
		}
	}
	if len(olds) == 0 {
		return nil
	}
	// Longest first: the replacer tries its strings in order at each
	// position, so a secret containing another is replaced whole.
	slices.SortStableFunc(olds, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(olds))
	for _, o := range olds {
		pairs = append(pairs, o, Redacted)
	}
	return strings.NewReplacer(pairs...)
}

// scrub replaces every spelling of the record's secrets in every field
// that can carry text from a caller, a back end or a planner: all string
// fields of Record, the argument values and keys at any depth, except the
// fields tagged audit:"closed" (values the server picks from a closed set).
func (rec *Record) scrub(secrets []string) {
	r := scrubber(secrets)
	if r == nil {
		return
	}
	rec.fields(func(f reflect.Value) {
		switch f.Kind() {
		case reflect.String:
			f.SetString(r.Replace(f.String()))
		case reflect.Slice:
			if s, ok := f.Interface().([]string); ok {
				out := make([]string, len(s))
				for j, e := range s {
					out[j] = r.Replace(e)
				}
				f.Set(reflect.ValueOf(out))
			}
		case reflect.Map:
			if m, ok := f.Interface().(map[string]any); ok {
				f.Set(reflect.ValueOf(scrubValue(m, r)))
			}
		}
	})
}

// texts returns the record's free-text strings outside the arguments.
func (rec *Record) texts() []string {
	var out []string
	rec.fields(func(f reflect.Value) {
		switch f.Kind() {
		case reflect.String:
			out = append(out, f.String())
		case reflect.Slice:
			if s, ok := f.Interface().([]string); ok {
				out = append(out, s...)
			}
		}
	})
	return out
}

// fields calls fn with each field of rec that is not audit:"closed".
func (rec *Record) fields(fn func(reflect.Value)) {
	v := reflect.ValueOf(rec).Elem()
	ty := v.Type()
	for i := range v.NumField() {
		if ty.Field(i).Tag.Get("audit") == "closed" || !ty.Field(i).IsExported() {
			continue
		}
		fn(v.Field(i))
	}
}

func scrubValue(v any, r *strings.Replacer) any {
	switch t := v.(type) {
	case string:
		return r.Replace(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[r.Replace(k)] = scrubValue(e, r)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = scrubValue(e, r)
		}
		return out
	case nil, bool:
		return t
	default:
		// A number or a typed value: scrubbed in its JSON form.
		b, err := json.Marshal(t)
		if err != nil {
			return t
		}
		if s := r.Replace(string(b)); s != string(b) {
			return s
		}
		return t
	}
}
