package mcpserver

import (
	"context"
	"fmt"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/fleet"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
	"github.com/mcpfleet/mcpfleet/proxymcp/internal/validate"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
)

const runtimeOnly = "Runtime change only: it is not written to the map or ACL file and is lost when HAProxy reloads."

// patternIn is the arguments of a map or ACL tool: the map or ACL, and the
// key (or pattern, or sample) and value it is given.
type patternIn interface {
	selector
	parts() (ref, key, value string)
}

type mapRefIn struct {
	fleetArg
	Map string `json:"map" jsonschema:"The map: its file path exactly as list_maps reports it, or #<id>." pattern:"^(#[0-9]+|[A-Za-z0-9/._-]+)$"`
}

type aclRefIn struct {
	fleetArg
	ACL string `json:"acl" jsonschema:"The acl: its file path exactly as list_acls reports it, or #<id>." pattern:"^(#[0-9]+|[A-Za-z0-9/._-]+)$"`
}

type mapGetIn struct {
	mapRefIn
	Key string `json:"key" jsonschema:"The sample to look up." minLength:"1" maxLength:"4096"`
}

type aclGetIn struct {
	aclRefIn
	Value string `json:"value" jsonschema:"The sample to look up." minLength:"1" maxLength:"4096"`
}

type mapAddIn struct {
	mapRefIn
	Key   string `json:"key" jsonschema:"Key to add (may contain spaces; stored whole)." minLength:"1" maxLength:"4096"`
	Value string `json:"value" jsonschema:"Value for the key (may contain spaces; stored whole)." minLength:"1" maxLength:"4096"`
}

type aclAddIn struct {
	aclRefIn
	Pattern string `json:"pattern" jsonschema:"Pattern to add, in the ACL's type (e.g. an IP address or network for src ACLs)." minLength:"1" maxLength:"4096"`
}

type mapDelIn struct {
	mapRefIn
	Key string `json:"key" jsonschema:"The key to remove." minLength:"1" maxLength:"4096"`
}

type aclDelIn struct {
	aclRefIn
	Pattern string `json:"pattern" jsonschema:"The pattern to remove." minLength:"1" maxLength:"4096"`
}

type mapSetIn struct {
	mapRefIn
	Key   string `json:"key" jsonschema:"Existing key." minLength:"1" maxLength:"4096"`
	Value string `json:"value" jsonschema:"New value." minLength:"1" maxLength:"4096"`
}

type mapEntry struct {
	Key   string `json:"key" minLength:"1"`
	Value string `json:"value" minLength:"1"`
}

type replaceMapIn struct {
	mapRefIn
	Entries []mapEntry `json:"entries" jsonschema:"The new content: [{\"key\":...,\"value\":...}]. An empty array empties the map." maxItems:"10000"`
}

func (in mapRefIn) parts() (string, string, string) { return in.Map, "", "" }
func (in aclRefIn) parts() (string, string, string) { return in.ACL, "", "" }
func (in mapGetIn) parts() (string, string, string) { return in.Map, in.Key, "" }
func (in aclGetIn) parts() (string, string, string) { return in.ACL, in.Value, "" }
func (in mapAddIn) parts() (string, string, string) { return in.Map, in.Key, in.Value }
func (in aclAddIn) parts() (string, string, string) { return in.ACL, in.Pattern, "" }
func (in mapDelIn) parts() (string, string, string) { return in.Map, in.Key, "" }
func (in aclDelIn) parts() (string, string, string) { return in.ACL, in.Pattern, "" }

func (t *tools) mapTools() {
	patternTools[mapRefIn, mapGetIn, mapAddIn, mapDelIn](t, haproxy.KindMap)
	patternTools[aclRefIn, aclGetIn, aclAddIn, aclDelIn](t, haproxy.KindACL)
	addChange(t, "set_map_entry", "Set a map entry",
		"Change the value of an existing key in a map (`set map`). Keys and values may contain spaces and are stored whole. "+runtimeOnly,
		idempotent, toolcall.Destructive,
		func(in mapSetIn) (planned, error) {
			ref, key, val := in.Map, in.Key, in.Value
			if err := checkAll(validate.Ref("map", ref), textArg("key", key), textArg("value", val)); err != nil {
				return planned{}, err
			}
			return planned{
				effect:   t.patternEffect(haproxy.KindMap, ref),
				commands: t.hp.SetMapEntryCommands(ref, key, val),
				describe: t.patternPreview(haproxy.KindMap, ref, key, "lookups of the key return the new value; "+runtimeOnly, func(v haproxy.PatternView, cur string, found bool) string {
					if !found {
						return fmt.Sprintf("Set key %q to %q in map %s on %s: the key is not in the map (%s), so HAProxy will refuse and nothing will change; use add_map_entry to add it.", key, val, ref, t.at(), entries(v.Count))
					}
					return fmt.Sprintf("Change the value of key %q in map %s from %q to %q on %s. The map has %s.", key, ref, cur, val, t.at(), entries(v.Count))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.SetMapEntry(ctx, ref, key, val)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{"map": ref, "key": key, "value": val, "persisted": false, "note": runtimeOnly}, res)), nil
				},
			}, nil
		})

	addChange(t, "replace_map", "Replace a map",
		"Atomically replace every entry of a map: a new version is prepared, all entries are added to it, then it is committed in one step, so lookups never see a half-written map. If any entry is refused nothing changes. "+runtimeOnly,
		destructive, toolcall.Destructive,
		func(in replaceMapIn) (planned, error) {
			ref := in.Map
			list, err := mapEntries(in.Entries)
			if err := checkAll(validate.Ref("map", ref), err); err != nil {
				return planned{}, err
			}
			return planned{
				commands: t.hp.ReplaceMapCommands(ref, list),
				describe: func(ctx context.Context) (toolcall.Preview, error) {
					v, err := t.hp.PatternView(ctx, haproxy.KindMap, ref)
					if err != nil {
						return toolcall.Preview{}, err
					}
					added, removed, changed := mapDiff(v, list)
					return toolcall.Preview{
						Summary: fmt.Sprintf("Replace all %s of map %s (version %s) with %s on %s: %d key(s) added, %d removed, %d changed. The current content cannot be recovered with these tools.",
							entries(v.Count), ref, v.Version, entries(len(list)), t.at(), added, removed, changed),
						State:        map[string]any{"map": ref, "version": v.Version, "entry_count": v.Count, "new_entry_count": len(list), "added": added, "removed": removed, "changed": changed},
						Effect:       "lookups see the new content at once, all of it; " + runtimeOnly,
						Precondition: v.Fingerprint(),
					}, nil
				},
				run: func(ctx context.Context) (result, error) {
					n, err := t.hp.ReplaceMap(ctx, ref, list)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, map[string]any{"map": ref, "entries": n, "replaced": true, "changed": true, "persisted": false, "note": runtimeOnly}), nil
				},
			}, nil
		})
}

// mapDiff counts how replacing v's entries with list changes the keys.
func mapDiff(v haproxy.PatternView, list []haproxy.MapEntry) (added, removed, changed int) {
	next := map[string]string{}
	for _, e := range list {
		next[e.Key] = e.Value
	}
	seen := map[string]bool{}
	for _, e := range v.Entries {
		seen[e.Key] = true
		nv, kept := next[e.Key]
		switch {
		case !kept:
			removed++
		case nv != e.Value:
			changed++
		}
	}
	for k := range next {
		if !seen[k] {
			added++
		}
	}
	return added, removed, changed
}

// patternPreview reads a map or ACL and whether key is in it, and words
// the preview with say. The approval depends on the key's presence and
// value.
func (t *tools) patternPreview(kind haproxy.MapKind, ref, key, effect string, say func(v haproxy.PatternView, value string, found bool) string) func(ctx context.Context) (toolcall.Preview, error) {
	return func(ctx context.Context) (toolcall.Preview, error) {
		v, err := t.hp.PatternView(ctx, kind, ref)
		if err != nil {
			return toolcall.Preview{}, err
		}
		val, found := v.Lookup(key)
		if kind == haproxy.KindACL {
			val = ""
		}
		state := map[string]any{string(kind): ref, "entry_count": v.Count, "present": found}
		fp := fmt.Sprintf("%s %s: %q absent", kind, ref, key)
		if found {
			fp = fmt.Sprintf("%s %s: %q present", kind, ref, key)
			if kind == haproxy.KindMap {
				state["value"] = val
				fp += fmt.Sprintf(" with value %q", val)
			}
		}
		return toolcall.Preview{Summary: say(v, val, found), State: state, Effect: effect, Precondition: fp}, nil
	}
}

// mapEntries checks replace_map's entries: text a runtime API command
// can carry.
func mapEntries(in []mapEntry) ([]haproxy.MapEntry, error) {
	out := make([]haproxy.MapEntry, 0, len(in))
	for _, e := range in {
		if err := checkAll(textArg("entries.key", e.Key), textArg("entries.value", e.Value)); err != nil {
			return nil, err
		}
		out = append(out, haproxy.MapEntry{Key: e.Key, Value: e.Value})
	}
	return out, nil
}

// patternTools declares the tools of maps or of ACLs: R names one, G
// looks a sample up, A adds an entry, D deletes one.
func patternTools[R, G, A, D patternIn](t *tools, kind haproxy.MapKind) {
	k := string(kind)
	upper := map[haproxy.MapKind]string{haproxy.KindMap: "map", haproxy.KindACL: "ACL"}[kind]
	addRead(t, "list_"+k+"s", "List "+upper+"s",
		"Every "+upper+" HAProxy has loaded: id, file (refer to it by this path or by #id), description and entry count.",
		func(ctx context.Context, _ noArgs) (result, error) {
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
	addRead(t, "show_"+k, "Show "+upper+" entries", entryDesc,
		func(ctx context.Context, in R) (result, error) {
			ref, _, _ := in.parts()
			if err := validate.Ref(k, ref); err != nil {
				return result{}, err
			}
			e, err := t.hp.ShowPatterns(ctx, kind, ref)
			if err != nil {
				return result{}, err
			}
			r := ok(haproxy.SourceRuntime, map[string]any{k: ref, "count": len(e), "entries": e})
			r.items = func() []fleet.Item {
				if kind == haproxy.KindACL {
					return fleet.ACLItems(e)
				}
				return fleet.MapItems(e)
			}
			return r, nil
		})

	lookupDesc := "Look a key up in a map as HAProxy would (`get map`): whether it matched, the matching key and its value."
	sampleName := "key"
	if kind == haproxy.KindACL {
		lookupDesc = "Test a value against an ACL as HAProxy would (`get acl`): whether it matched and which pattern."
		sampleName = "value"
	}
	addRead(t, "get_"+k, "Look up in a "+upper, lookupDesc,
		func(ctx context.Context, in G) (result, error) {
			ref, sample, _ := in.parts()
			if err := checkAll(validate.Ref(k, ref), textArg(sampleName, sample)); err != nil {
				return result{}, err
			}
			res, err := t.hp.GetPattern(ctx, kind, ref, sample)
			if err != nil {
				return result{}, err
			}
			r := ok(haproxy.SourceRuntime, map[string]any{k: ref, sampleName: sample, "matched": fleet.Matched(res), "result": verbatim{res}})
			r.items = func() []fleet.Item { return []fleet.Item{fleet.LookupItem(kind, sample, res)} }
			return r, nil
		})

	addDesc := "Add a key and value to a map (`add map`). HAProxy does not check for duplicates. " + runtimeOnly
	keyName := "key"
	if kind == haproxy.KindACL {
		keyName = "pattern"
		addDesc = "Add a pattern to an ACL (`add acl`); HAProxy checks it against the ACL's type. " + runtimeOnly
	}
	addChange(t, "add_"+k+"_entry", "Add a "+upper+" entry", addDesc, write, toolcall.Destructive,
		func(in A) (planned, error) {
			ref, key, val := in.parts()
			if err := checkAll(validate.Ref(k, ref), textArg(keyName, key), textArg("value", val)); err != nil {
				return planned{}, err
			}
			what := fmt.Sprintf("pattern %q", key)
			if kind == haproxy.KindMap {
				what = fmt.Sprintf("key %q with value %q", key, val)
			}
			return planned{
				effect:   t.patternEffect(kind, ref),
				commands: t.hp.AddEntryCommands(kind, ref, key, val),
				describe: func(ctx context.Context) (toolcall.Preview, error) {
					pv, err := t.patternPreview(kind, ref, key, "", func(v haproxy.PatternView, cur string, found bool) string {
						sum := fmt.Sprintf("Add %s to %s %s on %s. It has %s", what, upper, ref, t.at(), entries(v.Count))
						switch {
						case found && kind == haproxy.KindMap:
							return sum + fmt.Sprintf("; the key is already there with value %q and HAProxy keeps both entries.", cur)
						case found:
							return sum + "; the pattern is already there and HAProxy keeps both entries."
						}
						return sum + "; the " + map[haproxy.MapKind]string{haproxy.KindMap: "key", haproxy.KindACL: "pattern"}[kind] + " is not there yet."
					})(ctx)
					// Adding does not depend on what else is there.
					pv.Precondition, pv.Effect = "", "the entry is added; "+runtimeOnly
					return pv, err
				},
				run: func(ctx context.Context) (result, error) {
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
				},
			}, nil
		})

	delName, delDesc := "key", "Remove a key from a map (`del map`)."
	if kind == haproxy.KindACL {
		delName, delDesc = "pattern", "Remove a pattern from an ACL (`del acl`)."
	}
	addChange(t, "del_"+k+"_entry", "Delete a "+upper+" entry", delDesc+" "+runtimeOnly, destructive, toolcall.Destructive,
		func(in D) (planned, error) {
			ref, key, _ := in.parts()
			if err := checkAll(validate.Ref(k, ref), textArg(delName, key)); err != nil {
				return planned{}, err
			}
			return planned{
				commands: t.hp.DelEntryCommands(kind, ref, key),
				describe: t.patternPreview(kind, ref, key, "lookups no longer match it; "+runtimeOnly, func(v haproxy.PatternView, cur string, found bool) string {
					switch {
					case !found:
						return fmt.Sprintf("Delete %s %q from %s %s on %s: it is not there (%s), so HAProxy will refuse and nothing will change.", delName, key, upper, ref, t.at(), entries(v.Count))
					case kind == haproxy.KindMap:
						return fmt.Sprintf("Delete key %q (value %q) from map %s on %s. The map has %s; the entry is gone until added again.", key, cur, ref, t.at(), entries(v.Count))
					}
					return fmt.Sprintf("Delete pattern %q from ACL %s on %s. The ACL has %s; requests it matched no longer match.", key, ref, t.at(), entries(v.Count))
				}),
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.DelEntry(ctx, kind, ref, key)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{k: ref, delName: key, "deleted": true, "persisted": false, "note": runtimeOnly}, res)), nil
				},
			}, nil
		})

	addChange(t, "clear_"+k, "Clear a "+upper, "Remove every entry of a "+upper+" (`clear "+k+"`). "+runtimeOnly, destructive, toolcall.Destructive,
		func(in R) (planned, error) {
			ref, _, _ := in.parts()
			if err := validate.Ref(k, ref); err != nil {
				return planned{}, err
			}
			return planned{
				commands: t.hp.ClearPatternsCommands(kind, ref),
				describe: func(ctx context.Context) (toolcall.Preview, error) {
					v, err := t.hp.PatternView(ctx, kind, ref)
					if err != nil {
						return toolcall.Preview{}, err
					}
					return toolcall.Preview{
						Summary:      fmt.Sprintf("Remove all %s of %s %s (version %s) on %s. They cannot be recovered with these tools; lookups match nothing until entries are added again.", entries(v.Count), upper, ref, v.Version, t.at()),
						State:        v,
						Effect:       "the " + upper + " is empty; " + runtimeOnly,
						Precondition: v.Fingerprint(),
					}, nil
				},
				run: func(ctx context.Context) (result, error) {
					res, err := t.hp.ClearPatterns(ctx, kind, ref)
					if err != nil {
						return result{}, err
					}
					return ok(haproxy.SourceRuntime, applied(map[string]any{k: ref, "cleared": true, "persisted": false, "note": runtimeOnly}, res)), nil
				},
			}, nil
		})
}
