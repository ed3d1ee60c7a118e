package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
)

const runtimeOnly = "Runtime change only: it is not written to the map or ACL file and is lost when HAProxy reloads."

const maxReplaceEntries = 10000

func (t *tools) mapTools() {
	for _, kind := range []haproxy.MapKind{haproxy.KindMap, haproxy.KindACL} {
		t.patternTools(kind)
	}
	t.add("set_map_entry", "Set a map entry",
		"Change the value of an existing key in a map (`set map`). Keys and values may contain spaces and are stored whole. "+runtimeOnly,
		idempotent, []prop{pMapRef("map"), pText("key", "Existing key.", true), pText("value", "New value.", true)},
		func(ctx context.Context, a *args) (result, error) {
			ref, key, val := a.ref("map"), a.text("key", true), a.text("value", true)
			if err := a.check(); err != nil {
				return result{}, err
			}
			res, err := t.hp.SetMapEntry(ctx, ref, key, val)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, applied(map[string]any{"map": ref, "key": key, "value": val, "persisted": false, "note": runtimeOnly}, res)), nil
		})

	t.add("replace_map", "Replace a map",
		"Atomically replace every entry of a map: a new version is prepared, all entries are added to it, then it is committed in one step, so lookups never see a half-written map. If any entry is refused nothing changes. "+runtimeOnly,
		destructive, []prop{pMapRef("map"),
			{"entries", mcp.WithArray("entries", mcp.Required(), mcp.Description("The new content: [{\"key\":...,\"value\":...}]. An empty array empties the map."),
				mcp.MaxItems(maxReplaceEntries), mcp.Items(map[string]any{"type": "object", "additionalProperties": false, "required": []string{"key", "value"},
					"properties": map[string]any{"key": map[string]any{"type": "string", "minLength": 1}, "value": map[string]any{"type": "string", "minLength": 1}}}))}},
		func(ctx context.Context, a *args) (result, error) {
			ref := a.ref("map")
			entries := mapEntries(a)
			if err := a.check(); err != nil {
				return result{}, err
			}
			n, err := t.hp.ReplaceMap(ctx, ref, entries)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"map": ref, "entries": n, "replaced": true, "changed": true, "persisted": false, "note": runtimeOnly}), nil
		})
}

func mapEntries(a *args) []haproxy.MapEntry {
	if a.err != nil {
		return nil
	}
	list, isList := a.m["entries"].([]any)
	if !a.has("entries") || !isList {
		a.set(&validate.Error{Arg: "entries", Rule: "is required: an array of {key, value} objects"})
		return nil
	}
	if len(list) > maxReplaceEntries {
		a.set(&validate.Error{Arg: "entries", Rule: "must have at most 10000 items"})
		return nil
	}
	out := make([]haproxy.MapEntry, 0, len(list))
	for _, item := range list {
		m, isObj := item.(map[string]any)
		if !isObj {
			a.set(&validate.Error{Arg: "entries", Rule: "items must be {key, value} objects"})
			return nil
		}
		sub := newArgs(m, []string{"key", "value"})
		k, v := sub.text("key", true), sub.text("value", true)
		if sub.err != nil {
			a.set(nested("entries", sub.err))
			return nil
		}
		out = append(out, haproxy.MapEntry{Key: k, Value: v})
	}
	return out
}

func (t *tools) patternTools(kind haproxy.MapKind) {
	k := string(kind)
	upper := map[haproxy.MapKind]string{haproxy.KindMap: "map", haproxy.KindACL: "ACL"}[kind]
	t.add("list_"+k+"s", "List "+upper+"s",
		"Every "+upper+" HAProxy has loaded: id, file (refer to it by this path or by #id), description and entry count.",
		read, nil, func(ctx context.Context, a *args) (result, error) {
			l, err := t.hp.ListPatterns(ctx, kind)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{"count": len(l), k + "s": l}), nil
		})

	entryDesc := "Entries of one map: entry id, key and value. HAProxy prints entries unescaped, so a key containing spaces is shown split at its first space; get_map looks a key up exactly."
	if kind == haproxy.KindACL {
		entryDesc = "Patterns of one ACL: entry id and pattern (in key)."
	}
	t.add("show_"+k, "Show "+upper+" entries", entryDesc, read, []prop{pMapRef(k)},
		func(ctx context.Context, a *args) (result, error) {
			ref := a.ref(k)
			if err := a.check(); err != nil {
				return result{}, err
			}
			e, err := t.hp.ShowPatterns(ctx, kind, ref)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, map[string]any{k: ref, "count": len(e), "entries": e}), nil
		})

	lookupDesc := "Look a key up in a map as HAProxy would (`get map`): whether it matched, the matching key and its value."
	sampleName := "key"
	if kind == haproxy.KindACL {
		lookupDesc = "Test a value against an ACL as HAProxy would (`get acl`): whether it matched and which pattern."
		sampleName = "value"
	}
	t.add("get_"+k, "Look up in a "+upper, lookupDesc, read,
		[]prop{pMapRef(k), pText(sampleName, "The sample to look up.", true)},
		func(ctx context.Context, a *args) (result, error) {
			ref, sample := a.ref(k), a.text(sampleName, true)
			if err := a.check(); err != nil {
				return result{}, err
			}
			res, err := t.hp.GetPattern(ctx, kind, ref, sample)
			if err != nil {
				return result{}, err
			}
			matched := res["found"] == "yes" || res["match"] == "yes"
			return ok(haproxy.SourceRuntime, map[string]any{k: ref, sampleName: sample, "matched": matched, "result": res}), nil
		})

	addProps := []prop{pMapRef(k), pText("key", "Key to add (may contain spaces; stored whole).", true), pText("value", "Value for the key (may contain spaces; stored whole).", true)}
	addDesc := "Add a key and value to a map (`add map`). HAProxy does not check for duplicates. " + runtimeOnly
	if kind == haproxy.KindACL {
		addProps = []prop{pMapRef(k), pText("pattern", "Pattern to add, in the ACL's type (e.g. an IP address or network for src ACLs).", true)}
		addDesc = "Add a pattern to an ACL (`add acl`); HAProxy checks it against the ACL's type. " + runtimeOnly
	}
	t.add("add_"+k+"_entry", "Add a "+upper+" entry", addDesc, write, addProps,
		func(ctx context.Context, a *args) (result, error) {
			ref := a.ref(k)
			var key, val string
			if kind == haproxy.KindMap {
				key, val = a.text("key", true), a.text("value", true)
			} else {
				key = a.text("pattern", true)
			}
			if err := a.check(); err != nil {
				return result{}, err
			}
			res, err := t.hp.AddEntry(ctx, kind, ref, key, val)
			if err != nil {
				return result{}, err
			}
			f := applied(map[string]any{k: ref, "added": true, "persisted": false, "note": runtimeOnly}, res)
			if kind == haproxy.KindMap {
				f["key"], f["value"] = key, val
			} else {
				f["pattern"] = key
			}
			return ok(haproxy.SourceRuntime, f), nil
		})

	delName, delDesc := "key", "Remove a key from a map (`del map`)."
	if kind == haproxy.KindACL {
		delName, delDesc = "pattern", "Remove a pattern from an ACL (`del acl`)."
	}
	t.add("del_"+k+"_entry", "Delete a "+upper+" entry", delDesc+" "+runtimeOnly, destructive,
		[]prop{pMapRef(k), pText(delName, "The "+delName+" to remove.", true)},
		func(ctx context.Context, a *args) (result, error) {
			ref, key := a.ref(k), a.text(delName, true)
			if err := a.check(); err != nil {
				return result{}, err
			}
			res, err := t.hp.DelEntry(ctx, kind, ref, key)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, applied(map[string]any{k: ref, delName: key, "deleted": true, "persisted": false, "note": runtimeOnly}, res)), nil
		})

	t.add("clear_"+k, "Clear a "+upper, "Remove every entry of a "+upper+" (`clear "+k+"`). "+runtimeOnly, destructive,
		[]prop{pMapRef(k)},
		func(ctx context.Context, a *args) (result, error) {
			ref := a.ref(k)
			if err := a.check(); err != nil {
				return result{}, err
			}
			res, err := t.hp.ClearPatterns(ctx, kind, ref)
			if err != nil {
				return result{}, err
			}
			return ok(haproxy.SourceRuntime, applied(map[string]any{k: ref, "cleared": true, "persisted": false, "note": runtimeOnly}, res)), nil
		})
}
