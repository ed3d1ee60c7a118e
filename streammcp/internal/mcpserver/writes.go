package mcpserver

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpfleet/mcpfleet/shared/mcperr"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/config"
)

// anyWritable says whether some cluster allows writes: the write tools are
// registered then, and each call is checked against its cluster.
func (h *Handler) anyWritable() bool {
	return slices.ContainsFunc(h.clusters, func(c *clusterState) bool { return c.Writes.Allowed })
}

// writable refuses a write to a cluster whose switch is off, naming the
// variable that decides it.
func (h *Handler) writable(cl *clusterState) error {
	w := cl.Writes
	if w.Allowed {
		return nil
	}
	vars := w.AllowedVar
	if len(h.clusters) > 1 && !strings.HasPrefix(w.AllowedVar, config.VarPrefix(cl.Name)) {
		vars = fmt.Sprintf("%s is unset and %s", config.ClusterVar(cl.Name, "STREAM_ALLOW_WRITES"), w.AllowedVar)
	}
	return mcperr.New(mcperr.Permission, "write to Kafka cluster "+cl.Name,
		fmt.Errorf("cluster %s is read-only: %s is not true", cl.Name, vars),
		fmt.Sprintf("set %s=true to allow writes there, or pass cluster naming a writable one; nothing was sent",
			config.ClusterVar(cl.Name, "STREAM_ALLOW_WRITES")))
}

// topicAllowed refuses a topic outside the cluster's write allowlist.
func topicAllowed(cl *clusterState, topic string) error {
	return allowed(cl.Name, "topic", topic, cl.Writes.Topics, cl.Writes.TopicsVar)
}

// groupAllowed refuses a group outside the cluster's write allowlist.
func groupAllowed(cl *clusterState, group string) error {
	return allowed(cl.Name, "consumer group", group, cl.Writes.Groups, cl.Writes.GroupsVar)
}

func allowed(cluster, what, name string, globs []string, variable string) error {
	if len(globs) == 0 {
		return nil
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return nil
		}
	}
	return mcperr.New(mcperr.Permission, fmt.Sprintf("write to %s %s on cluster %s", what, quoteShort(name), cluster),
		fmt.Errorf("it matches none of %s=%s", variable, strings.Join(globs, ",")),
		fmt.Sprintf("write tools may only touch the %ss that list allows; nothing was sent", what))
}

// topicName is what Kafka accepts as a topic name.
var topicName = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// checkTopic refuses a name Kafka would refuse, before any request.
func checkTopic(arg, name string) error {
	if !topicName.MatchString(name) || name == "." || name == ".." {
		return mcperr.Invalidf("%s: %s is not a valid topic name (1 to 249 of a-z A-Z 0-9 . _ -, and not \".\" or \"..\"); nothing was sent", arg, quoteShort(name))
	}
	return nil
}

// checkGroup refuses a group id no operator would mean: empty, padded, with
// control characters, or longer than 255.
func checkGroup(arg, id string) error {
	if id == "" || strings.TrimSpace(id) != id || len(id) > 255 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return mcperr.Invalidf("%s: %s is not a consumer group id this server changes (non-empty, at most 255 bytes, no surrounding spaces or control characters); nothing was sent", arg, quoteShort(id))
	}
	return nil
}
