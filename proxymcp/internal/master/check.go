package master

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Checker validates a configuration with "haproxy -c", using the
// instance's own binary and files: another haproxy version would accept or
// refuse other keywords, so a check with the wrong binary proves nothing.
type Checker struct {
	// Command runs haproxy: its path (PROXY_<NAME>_HAPROXY_BIN), or a
	// wrapper and its arguments (["chroot", "/srv/root", "/usr/sbin/haproxy"]).
	// Empty: the instance's files are not reachable from here.
	Command []string
	// Files are the configuration files or directories, as "-f" takes them.
	Files []string
	// Dir is the working directory (relative paths in the configuration).
	Dir string
}

// CheckResult is the outcome of "haproxy -c".
type CheckResult struct {
	Valid bool `json:"valid"`
	// Output is what haproxy printed (stdout then stderr): its own words
	// for every error and warning.
	Output  string   `json:"output"`
	Command []string `json:"command"`
}

// ErrNotCheckable says the configuration cannot be checked from here.
var ErrNotCheckable = errors.New("the configuration cannot be checked from here: proxymcp does not see this instance's haproxy binary and configuration files (set PROXY_<NAME>_HAPROXY_BIN and run proxymcp on HAProxy's host or with its files on a shared volume)")

// Check runs "haproxy -c -f <file>..." under ctx (cancelling it kills
// haproxy). A configuration haproxy refuses is Valid=false with a nil
// error; the error is for a check that could not run.
func (c Checker) Check(ctx context.Context) (CheckResult, error) {
	if len(c.Command) == 0 || c.Command[0] == "" || len(c.Files) == 0 {
		return CheckResult{}, ErrNotCheckable
	}
	args := append([]string{}, c.Command[1:]...)
	args = append(args, "-c")
	for _, f := range c.Files {
		args = append(args, "-f", f)
	}
	cmd := exec.CommandContext(ctx, c.Command[0], args...)
	cmd.Dir = c.Dir
	// A wrapper (a script, chroot) may leave children holding the output
	// pipes: kill the whole process group, and stop waiting for the pipes
	// soon after.
	killGroupOnCancel(cmd)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := CheckResult{Command: append([]string{c.Command[0]}, args...)}
	res.Output = strings.TrimSpace(stdout.String() + stderr.String())
	if ctx.Err() != nil {
		return res, fmt.Errorf("haproxy -c stopped: %w", ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.Valid = true
		if res.Output == "" {
			res.Output = "Configuration file is valid"
		}
	case errors.As(err, &exit):
		// haproxy -c exits 1 (2 on some versions) for a refused configuration.
		if res.Output == "" {
			res.Output = fmt.Sprintf("haproxy -c exited with %s and printed nothing", exit)
		}
	default:
		return res, fmt.Errorf("run %s: %w; check PROXY_<NAME>_HAPROXY_BIN", strings.Join(c.Command, " "), err)
	}
	return res, nil
}
