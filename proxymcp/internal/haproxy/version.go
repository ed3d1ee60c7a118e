package haproxy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/runtimeapi"
)

// Version is a detected HAProxy version.
type Version struct {
	Raw          string // e.g. "2.6.12-1+deb12u4"
	Major, Minor int
}

// AtLeast reports whether v >= major.minor.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// ParseVersion reads "2.6.12-1+deb12u4" or "3.1-dev4".
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	v := Version{Raw: s}
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return v, fmt.Errorf("unrecognised HAProxy version %q", s)
	}
	var err1, err2 error
	v.Major, err1 = strconv.Atoi(parts[0])
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i]
	}
	v.Minor, err2 = strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return v, fmt.Errorf("unrecognised HAProxy version %q", s)
	}
	return v, nil
}

// Feature is a runtime API command that not every version has.
type Feature struct {
	Command      string `json:"command"`
	MinVersion   string `json:"min_version"`
	major, minor int
	Note         string `json:"note,omitempty"`
}

// Features lists the version-dependent commands proxymcp uses or knows.
var Features = []Feature{
	{Command: "show version", MinVersion: "2.6", major: 2, minor: 6},
	{Command: "add server", MinVersion: "2.6", major: 2, minor: 6, Note: "2.4 and 2.5 need experimental-mode, which proxymcp switches on for the command"},
	{Command: "del server", MinVersion: "2.5", major: 2, minor: 5, Note: "2.4 deletes only servers added at run time"},
	{Command: "prepare map", MinVersion: "2.4", major: 2, minor: 4},
	{Command: "show servers conn", MinVersion: "2.4", major: 2, minor: 4},
	{Command: "show sess older", MinVersion: "3.0", major: 3, minor: 0},
	{Command: "wait", MinVersion: "3.0", major: 3, minor: 0},
	{Command: "echo", MinVersion: "3.1", major: 3, minor: 1},
	{Command: "debug counters", MinVersion: "3.1", major: 3, minor: 1},
	{Command: "add backend", MinVersion: "3.4", major: 3, minor: 4},
}

// addServerExperimental is the oldest version where add server works with experimental-mode.
var addServerExperimental = Version{Major: 2, Minor: 4}

func feature(cmd string) (Feature, bool) {
	for _, f := range Features {
		if f.Command == cmd {
			return f, true
		}
	}
	return Feature{}, false
}

// Version detects the HAProxy version once ("show version", or "show info"
// before 2.6) and remembers it.
func (c *Client) Version(ctx context.Context) (Version, error) {
	c.mu.Lock()
	if c.version != nil {
		v := *c.version
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	if c.Runtime == nil {
		return Version{}, ErrRuntimeDisabled
	}
	out, err := c.Runtime.Execute(ctx, "show version")
	var re *runtimeapi.ReplyError
	if errors.As(err, &re) && re.UnknownCommand() {
		var info string
		info, err = c.Runtime.Execute(ctx, "show info")
		out = fmt.Sprint(ParseInfo(info)["Version"])
	}
	if err != nil {
		return Version{}, err
	}
	v, err := ParseVersion(out)
	if err != nil {
		return Version{}, err
	}
	c.mu.Lock()
	c.version = &v
	c.mu.Unlock()
	return v, nil
}

// AssumeVersion sets the version instead of detecting it: tests use it to
// show how older or newer releases are treated, which the installed HAProxy
// cannot.
func (c *Client) AssumeVersion(raw string) error {
	v, err := ParseVersion(raw)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.version = &v
	c.mu.Unlock()
	return nil
}

// Require returns an *UnsupportedError when the detected version lacks cmd.
func (c *Client) Require(ctx context.Context, cmd string) error {
	f, ok := feature(cmd)
	if !ok {
		return nil
	}
	v, err := c.Version(ctx)
	if err != nil {
		return err
	}
	if cmd == "add server" && v.AtLeast(addServerExperimental.Major, addServerExperimental.Minor) {
		return nil
	}
	if !v.AtLeast(f.major, f.minor) {
		return &UnsupportedError{Command: cmd, Need: f.MinVersion, Have: v.Raw}
	}
	return nil
}

// SupportedCommand is one row of version_info's support table.
type SupportedCommand struct {
	Feature
	Supported bool `json:"supported"`
}

// Support returns the support table for v.
func Support(v Version) []SupportedCommand {
	out := make([]SupportedCommand, 0, len(Features))
	for _, f := range Features {
		ok := v.AtLeast(f.major, f.minor)
		if f.Command == "add server" {
			ok = v.AtLeast(addServerExperimental.Major, addServerExperimental.Minor)
		}
		out = append(out, SupportedCommand{Feature: f, Supported: ok})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Command < out[j].Command })
	return out
}
