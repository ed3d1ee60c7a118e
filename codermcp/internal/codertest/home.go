package codertest

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteHome writes a CODEX_HOME config under dir that points the CLI at the
// endpoint at baseURL with model as default, and returns the directory.
// Retries are off so that error cases finish in about a second.
func WriteHome(dir, baseURL, model string) (string, error) {
	home := filepath.Join(dir, "codex-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	cfg := fmt.Sprintf(`# Written by codermcp's codertest: the Codex CLI talks to a local fake model.
model = %q
model_provider = "codertest"

[model_providers.codertest]
name = "codertest"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, model, baseURL+"/v1")
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return "", err
	}
	return home, nil
}
