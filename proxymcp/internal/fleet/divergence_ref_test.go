package fleet

// The divergence code as it was before it was made to allocate less
// (commit ef5ae8e): the reference the new code must match exactly.

import (
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

func divergeRef(instances []string, items map[string][]Item) []Divergence {
	out := []Divergence{}
	if len(instances) < 2 {
		return out
	}
	type objKey struct{ kind, key string }
	n := len(instances)
	total := 0
	for _, in := range instances {
		total += len(items[in])
	}
	// One slot per object, each with one entry per instance (nil: absent).
	index := make(map[objKey]int, total/n+1)
	var keys []objKey
	var slots [][]*Item
	for j, in := range instances {
		list := items[in]
		for i := range list {
			it := &list[i]
			k := objKey{it.Kind, it.Key}
			s, ok := index[k]
			if !ok {
				s = len(slots)
				index[k] = s
				keys = append(keys, k)
				slots = append(slots, make([]*Item, n))
			}
			if prev := slots[s][j]; prev != nil {
				// A key listed twice (a map key added twice): compare the
				// values together, in order.
				merged := Item{Kind: prev.Kind, Key: prev.Key, Fields: append([]Field(nil), prev.Fields...)}
				for fi, f := range it.Fields {
					if fi < len(merged.Fields) && merged.Fields[fi].Name == f.Name {
						merged.Fields[fi].Value += " | " + f.Value
					}
				}
				it = &merged
			}
			slots[s][j] = it
		}
	}
	for s, per := range slots {
		if sameRef(per) {
			continue // the common case, without allocating
		}
		if d, ok := divergenceRef(instances, keys[s].kind, keys[s].key, per); ok {
			out = append(out, d)
		}
	}
	return out
}

// same reports whether every instance has the object with equal fields.
func sameRef(per []*Item) bool {
	first := per[0]
	if first == nil {
		return false
	}
	for _, it := range per[1:] {
		if it == nil || len(it.Fields) != len(first.Fields) {
			return false
		}
		for i, f := range it.Fields {
			if f != first.Fields[i] {
				return false
			}
		}
	}
	return true
}

// divergence describes one object the instances disagree on.
func divergenceRef(instances []string, kind, key string, per []*Item) (Divergence, bool) {
	d := Divergence{Kind: kind, Object: key, Differences: map[string]map[string]string{}}
	var fieldOrder []string
	present := 0
	for _, it := range per {
		if it == nil {
			continue
		}
		present++
		for _, f := range it.Fields {
			if !containsRef(fieldOrder, f.Name) {
				fieldOrder = append(fieldOrder, f.Name)
			}
		}
	}
	if present < len(instances) {
		vals := map[string]string{}
		for j, in := range instances {
			if per[j] != nil {
				vals[in] = "yes"
			} else {
				vals[in] = "no"
			}
		}
		d.Differences[FieldPresent] = vals
	}
	var differing []string
	for _, name := range fieldOrder {
		// Almost every field agrees: compare first, and build the
		// per-instance map only for a field that differs (two maps per
		// field per object were most of a 16-instance divergence's cost).
		first, seen, differ := "", false, false
		for j := range instances {
			if per[j] == nil {
				continue
			}
			v := fieldValueRef(*per[j], name)
			if !seen {
				first, seen = v, true
			} else if v != first {
				differ = true
				break
			}
		}
		if !differ {
			continue
		}
		vals := make(map[string]string, len(instances))
		for j, in := range instances {
			if per[j] != nil {
				vals[in] = fieldValueRef(*per[j], name)
			}
		}
		d.Differences[name] = vals
		differing = append(differing, name)
	}
	if len(d.Differences) == 0 {
		return d, false // listed differently (a field on one side only) but equal
	}
	parts := make([]string, 0, len(instances))
	for j, in := range instances {
		it := per[j]
		switch {
		case it == nil:
			parts = append(parts, in+" "+Absent)
		case len(differing) == 0:
			parts = append(parts, in+" present")
		default:
			var vs []string
			for _, name := range differing {
				vs = append(vs, labels[name]+orNone(fieldValueRef(*it, name)))
			}
			parts = append(parts, in+" "+strings.Join(vs, " "))
		}
	}
	d.Summary = key + ": " + strings.Join(parts, ", ")
	return d, true
}

func containsRef(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func fieldValueRef(it Item, name string) string {
	for _, f := range it.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

func statItemsRef(rows []haproxy.StatRow) []Item {
	var out []Item
	for _, r := range rows {
		switch r.Type() {
		case "frontend":
			out = append(out, Item{Kind: KindFrontend, Key: r.Str("pxname"), Fields: []Field{
				{FieldStatus, r.Str("status")},
				{FieldMaxconn, maxconn(r.Int("slim"))},
			}})
		case "server":
			out = append(out, Item{Kind: KindServer, Key: r.Str("pxname") + "/" + r.Str("svname"), Fields: []Field{
				{FieldStatus, r.Str("status")},
				{FieldWeight, strconv.FormatInt(r.Int("weight"), 10)},
				{FieldAddress, r.Str("addr")},
				{FieldMaxconn, maxconn(r.Int("slim"))},
			}})
		}
	}
	return out
}
