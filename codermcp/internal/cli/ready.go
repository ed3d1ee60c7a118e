package cli

import (
	"context"
	"fmt"
)

// Ready runs `<cli> --version` now and checks the answer, for GET /readyz.
// It does not use the cached Caps: a CLI removed, replaced or broken after
// start-up must turn the server unready. The caller bounds it with ctx (the
// readiness probe's own deadline and cache keep it cheap); a CLI that does
// not answer in time is killed with its process group.
func (c *Client) Ready(ctx context.Context) error {
	out, err := c.quick(ctx, "--version")
	if ctx.Err() != nil {
		return fmt.Errorf("Codex CLI %s did not answer --version in time (%v): check that `%s --version` returns at once on this host", c.Path, ctx.Err(), c.Path)
	}
	if err != nil {
		return fmt.Errorf("Codex CLI: %w; set CODER_CLI_PATH to a working Codex CLI %s or later", err, MinVersion)
	}
	v, err := ParseVersion(out)
	if err != nil {
		return fmt.Errorf("Codex CLI %s --version: %v; set CODER_CLI_PATH to the Codex CLI", c.Path, err)
	}
	if v.Less(MinVersion) {
		return fmt.Errorf("Codex CLI %s is %s; codermcp needs %s or later (npm install -g @openai/codex)", c.Path, v, MinVersion)
	}
	return nil
}
