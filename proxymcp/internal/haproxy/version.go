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
	// subMode: the command is a mode of one "help" lists (e.g. "show sess
	// older" of "show sess"), so help cannot tell; the version decides.
	subMode bool
}

// Features lists the version-dependent commands proxymcp uses or knows.
// MinVersion is upstream's (management.txt); on a detected HAProxy the
// commands its "help" lists decide, so a backport counts and a build
// without a feature does not.
var Features = []Feature{
	{Command: "show version", MinVersion: "2.6", major: 2, minor: 6},
	{Command: "add server", MinVersion: "2.6", major: 2, minor: 6, Note: "2.4 and 2.5 need experimental-mode, which proxymcp switches on for the command"},
	{Command: "del server", MinVersion: "2.5", major: 2, minor: 5, Note: "2.4 deletes only servers added at run time"},
	{Command: "prepare map", MinVersion: "2.4", major: 2, minor: 4},
	{Command: "show servers conn", MinVersion: "2.4", major: 2, minor: 4},
	{Command: "show ssl cert", MinVersion: "2.2", major: 2, minor: 2},
	{Command: "show sess older", MinVersion: "3.0", major: 3, minor: 0, subMode: true},
	{Command: "wait", MinVersion: "3.0", major: 3, minor: 0},
	{Command: "echo", MinVersion: "3.1", major: 3, minor: 1},
	{Command: "debug counters", MinVersion: "3.1", major: 3, minor: 1},
	{Command: "dump ssl cert", MinVersion: "3.1", major: 3, minor: 1},
	{Command: "show ssl sni", MinVersion: "3.2", major: 3, minor: 2},
	{Command: "add server help", MinVersion: "3.2", major: 3, minor: 2, subMode: true},
	{Command: "add backend", MinVersion: "3.4", major: 3, minor: 4},
}

// Commands is the set of runtime API commands a HAProxy lists in "help",
// each as its leading words ("show servers conn", "add server").
type Commands map[string]bool

// ParseHelp reads "help": one "  <words> <args> : <description>" line per
// command; the command is the words before the first argument ("<x>",
// "[x]", "{x}", "(x)", "|") or the ":" column.
func ParseHelp(text string) Commands {
	out := Commands{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, " ") {
			continue // "The following commands are valid at this level:" and the like
		}
		left, _, found := strings.Cut(line, " : ")
		if !found {
			continue
		}
		var words []string
		for _, w := range strings.Fields(left) {
			if strings.ContainsAny(w[:1], "<[{(|*@") || w == ":" {
				break
			}
			words = append(words, w)
		}
		if len(words) > 0 {
			out[strings.Join(words, " ")] = true
		}
	}
	return out
}

// Has reports whether cmd, or a longer command starting with its words,
// is listed ("show ssl" is there when "show ssl cert" is).
func (c Commands) Has(cmd string) bool {
	if c[cmd] {
		return true
	}
	for k := range c {
		if strings.HasPrefix(k, cmd+" ") {
			return true
		}
	}
	return false
}

// Capabilities is what was detected of one HAProxy: its version and, when
// "help" answered, its commands.
type Capabilities struct {
	Version  Version
	Commands Commands // nil: unknown, the version decides
}

// Check returns nil when the HAProxy has cmd, or an *UnsupportedError.
// Commands proxymcp does not track as version-dependent always pass.
func (cp Capabilities) Check(cmd string) error {
	f, ok := feature(cmd)
	if !ok {
		return nil
	}
	if cp.Commands != nil && !f.subMode {
		if cp.Commands.Has(cmd) {
			return nil
		}
		return &UnsupportedError{Command: cmd, Need: f.MinVersion, Have: cp.Version.Raw, Detail: "it is not in this HAProxy's \"help\""}
	}
	if cmd == "add server" && cp.Version.AtLeast(addServerExperimental.Major, addServerExperimental.Minor) {
		return nil
	}
	if !cp.Version.AtLeast(f.major, f.minor) {
		return &UnsupportedError{Command: cmd, Need: f.MinVersion, Have: cp.Version.Raw}
	}
	return nil
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
	// "help" tells which commands this build has. Without it (an old
	// version, a socket level that hides commands) the version decides.
	var cmds Commands
	if help, herr := c.Runtime.Execute(ctx, "help"); herr == nil {
		if cmds = ParseHelp(help); len(cmds) == 0 {
			cmds = nil
		}
	}
	c.mu.Lock()
	c.version, c.commands = &v, cmds
	c.mu.Unlock()
	return v, nil
}

// Capabilities returns the detected version and commands.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	v, err := c.Version(ctx)
	if err != nil {
		return Capabilities{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Capabilities{Version: v, Commands: c.commands}, nil
}

// Require returns an *UnsupportedError when the detected HAProxy lacks cmd.
func (c *Client) Require(ctx context.Context, cmd string) error {
	cp, err := c.Capabilities(ctx)
	if err != nil {
		return err
	}
	return cp.Check(cmd)
}

// SupportedCommand is one row of version_info's support table.
type SupportedCommand struct {
	Feature
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
}

// Support returns the command support table for what was detected.
func (cp Capabilities) Support() []SupportedCommand {
	out := make([]SupportedCommand, 0, len(Features))
	for _, f := range Features {
		row := SupportedCommand{Feature: f, Supported: true}
		if err := cp.Check(f.Command); err != nil {
			row.Supported, row.Reason = false, err.Error()
		}
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Command < out[j].Command })
	return out
}
