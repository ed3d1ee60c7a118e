package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// TestE2EExternalAuthentication drives Trino's external (browser)
// authentication through the built shell: a profile with auth: external,
// the engine answering 401 with x_redirect_server/x_token_server, the shell
// printing the sign-in URL, a headless "browser" step (this test opening
// the URL as the signed-in user carol), the shell polling the token server,
// the query running as carol and the token kept per profile in a 0600 file
// that the next run reuses without a browser.
func TestE2EExternalAuthentication(t *testing.T) {
	idp := idptest.New(t, idptest.Options{})
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithJWTAuth(&trinotest.JWTAuth{
		JWKSURL: idp.URL + "/jwks", Issuer: idp.Issuer(), Audience: "trino", PrincipalField: "preferred_username",
		External: func(user string) (string, error) {
			c := idp.Claims("trino")
			c["preferred_username"] = user
			return idp.Sign(c), nil
		},
	}))
	env := baseEnv(t)
	env["PATH"] = t.TempDir() // no browser launcher: the URL is printed
	// The test engine's certificate is self-signed: insecure (testing only).
	writeConfig(t, env, fmt.Sprintf(`{"profiles": {"corp": {"host": %q, "port": %d, "catalog": "sales", "schema": "public",
		"ssl": {"enabled": true, "insecure": true}, "auth": "external"}}}`, srv.Host(), srv.Port()))
	bin := e2e.Build(t, "../..")

	run := func(browser bool) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "query", "SELECT 'external-e2e'", "--profile", "corp", "--format", "csv")
		cmd.Env = envList(env)
		var out bytes.Buffer
		cmd.Stdout = &out
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var errText strings.Builder
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				line := sc.Text()
				errText.WriteString(line + "\n")
				u := strings.TrimSpace(line)
				if browser && strings.HasPrefix(u, srv.URL()+"/oauth2/token/initiate/") {
					// The headless browser: carol signs in.
					resp, err := srv.HTTPClient().Get(u + "?user=carol")
					if err != nil {
						t.Errorf("browser: %v", err)
						continue
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("browser: HTTP %d", resp.StatusCode)
					}
				}
			}
		}()
		err := cmd.Wait()
		pw.Close()
		<-done
		if err != nil {
			t.Fatalf("shell: %v\nstdout %q\nstderr %q", err, out.String(), errText.String())
		}
		return out.String(), errText.String()
	}

	out, errText := run(true)
	if p := srv.LastQuery(t, "SELECT 'external-e2e'").Principal; p != "carol" || !strings.Contains(out, "external-e2e") {
		t.Errorf("the query ran as %q: %q", p, out)
	}
	if !strings.Contains(errText, "Sign in to Trino in your browser") || !strings.Contains(errText, srv.URL()+"/oauth2/token/initiate/") {
		t.Errorf("the sign-in URL was not shown: %q", errText)
	}
	tok := filepath.Join(env["XDG_CONFIG_HOME"], "sqlmcp", "tokens", "corp.token")
	fi, err := os.Stat(tok)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token cache %s: %v %v, want mode 0600", tok, fi, err)
	}
	if d, _ := os.Stat(filepath.Dir(tok)); d == nil || d.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode, want 0700")
	}
	// The next run reuses the cached token: no sign-in, no browser.
	srv.ResetRequests()
	out, errText = run(false)
	if p := srv.LastQuery(t, "SELECT 'external-e2e'").Principal; p != "carol" || strings.Contains(errText, "Sign in") {
		t.Errorf("second run: stdout %q stderr %q", out, errText)
	}
	var statements, refused int
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/statement" {
			statements++
			if r.Status == http.StatusUnauthorized {
				refused++
			}
		}
	}
	if statements != 1 || refused != 0 {
		t.Errorf("second run: %d statements, %d refused; want the cached token accepted at once", statements, refused)
	}
}
