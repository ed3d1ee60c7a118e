package audit

// Redact returns a copy of args with the value of every secret-named field,
// at any depth, replaced by Redacted.
func Redact(args map[string]any) map[string]any {
	out, _ := redactArgs(args)
	return out
}
