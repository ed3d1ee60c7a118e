package fleet

import (
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

// Kinds of objects compared across instances.
const (
	KindServer   = "server"
	KindFrontend = "frontend"
	KindMapEntry = "map entry"
	KindACLEntry = "acl entry"
)

// Compared fields. FieldPresent is reported when an object exists on some
// instances and not on others.
const (
	FieldPresent    = "present"
	FieldStatus     = "status"
	FieldAdminState = "admin_state"
	FieldOpState    = "op_state"
	FieldWeight     = "weight"
	FieldAddress    = "address"
	FieldMaxconn    = "maxconn"
	FieldValue      = "value"
	FieldMatch      = "match"
)

// labels prefix a field's value in a summary; status reads alone ("DRAIN").
var labels = map[string]string{FieldAdminState: "admin ", FieldOpState: "op ", FieldWeight: "weight ", FieldAddress: "addr ",
	FieldMaxconn: "maxconn ", FieldValue: "value ", FieldMatch: "match "}

// Field is one compared attribute of an object.
type Field struct {
	Name, Value string
}

// Item is one object as one instance describes it.
type Item struct {
	Kind   string
	Key    string // e.g. "be_app/app2", a frontend, a map key, an ACL pattern
	Fields []Field
}

// Divergence is one object whose state differs between instances.
type Divergence struct {
	Kind   string `json:"kind"`
	Object string `json:"object"`
	// Differences maps each differing field to every instance's value
	// ("absent" when the object is missing there).
	Differences map[string]map[string]string `json:"differences"`
	// Summary reads e.g. "be_app/app2: lb1 DRAIN, lb2 UP".
	Summary string `json:"summary"`
}

// Absent is the value of a field on an instance that lacks the object.
const Absent = "absent"

// Diverge compares the items each instance reported (instances in order;
// only instances that answered belong in it: an instance that could not be
// read is not "absent") and returns every object whose fields or presence
// differ, in the order objects first appear. An empty result means the
// instances agree on everything compared.
func Diverge(instances []string, items map[string][]Item) []Divergence {
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
	// One slot per object, each with one entry per instance (nil: absent):
	// object s's entries are slots[s*n : s*n+n], in one array.
	index := make(map[objKey]int, total/n+1)
	keys := make([]objKey, 0, total/n+1)
	slots := make([]*Item, 0, (total/n+1)*n)
	for j, in := range instances {
		list := items[in]
		// Instances almost always list their objects in the same order:
		// the object after the previous one is tried before the map.
		next := 0
		for i := range list {
			it := &list[i]
			k := objKey{it.Kind, it.Key}
			s := -1
			if next < len(keys) && keys[next] == k {
				s = next
			} else if found, ok := index[k]; ok {
				s = found
			} else {
				s = len(keys)
				index[k] = s
				keys = append(keys, k)
				slots = append(slots, make([]*Item, n)...)
			}
			next = s + 1
			if prev := slots[s*n+j]; prev != nil {
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
			slots[s*n+j] = it
		}
	}
	for s, k := range keys {
		per := slots[s*n : s*n+n : s*n+n]
		if same(per) {
			continue // the common case, without allocating
		}
		if d, ok := divergence(instances, k.kind, k.key, per); ok {
			out = append(out, d)
		}
	}
	return out
}

// same reports whether every instance has the object with equal fields.
func same(per []*Item) bool {
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
func divergence(instances []string, kind, key string, per []*Item) (Divergence, bool) {
	d := Divergence{Kind: kind, Object: key, Differences: map[string]map[string]string{}}
	var order [8]string // the field names in order; an item has at most a few
	fieldOrder := order[:0]
	present := 0
	for _, it := range per {
		if it == nil {
			continue
		}
		present++
		for _, f := range it.Fields {
			if !contains(fieldOrder, f.Name) {
				fieldOrder = append(fieldOrder, f.Name)
			}
		}
	}
	if present < len(instances) {
		vals := make(map[string]string, len(instances))
		for j, in := range instances {
			if per[j] != nil {
				vals[in] = "yes"
			} else {
				vals[in] = "no"
			}
		}
		d.Differences[FieldPresent] = vals
	}
	var diff [8]string
	differing := diff[:0]
	for _, name := range fieldOrder {
		// Almost every field agrees: compare first, and build the
		// per-instance map only for a field that differs (two maps per
		// field per object were most of a 16-instance divergence's cost).
		first, seen, differ := "", false, false
		for j := range instances {
			if per[j] == nil {
				continue
			}
			v := fieldValue(per[j], name)
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
				vals[in] = fieldValue(per[j], name)
			}
		}
		d.Differences[name] = vals
		differing = append(differing, name)
	}
	if len(d.Differences) == 0 {
		return d, false // listed differently (a field on one side only) but equal
	}
	// "key: lb1 v1, lb2 v2", written once (the parts and joins of each
	// instance's values were a dozen allocations per instance).
	var b strings.Builder
	b.Grow(len(key) + len(instances)*(24+16*len(differing)))
	b.WriteString(key)
	b.WriteString(": ")
	for j, in := range instances {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(in)
		it := per[j]
		switch {
		case it == nil:
			b.WriteString(" " + Absent)
		case len(differing) == 0:
			b.WriteString(" present")
		default:
			for _, name := range differing {
				b.WriteByte(' ')
				b.WriteString(labels[name])
				b.WriteString(orNone(fieldValue(it, name)))
			}
		}
	}
	d.Summary = b.String()
	return d, true
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func fieldValue(it *Item, name string) string {
	for _, f := range it.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// Summaries returns the divergences' one-line summaries.
func Summaries(ds []Divergence) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Summary
	}
	return out
}

func maxconn(n int64) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

// ServerItems describes servers as list_servers and get_server report them
// (statistics): status, weight, address and port, maxconn.
func ServerItems(servers []haproxy.Server) []Item {
	out := make([]Item, 0, len(servers))
	for _, s := range servers {
		out = append(out, Item{Kind: KindServer, Key: s.Backend + "/" + s.Name, Fields: []Field{
			{FieldStatus, s.Status},
			{FieldWeight, strconv.FormatInt(s.Weight, 10)},
			{FieldAddress, hostPort(s.Address, s.Port)},
			{FieldMaxconn, maxconn(s.SessionLimit)},
		}})
	}
	return out
}

func hostPort(addr string, port int64) string {
	if addr == "" {
		return ""
	}
	if port == 0 {
		return addr
	}
	if strings.Contains(addr, ":") {
		return "[" + addr + "]:" + strconv.FormatInt(port, 10)
	}
	return addr + ":" + strconv.FormatInt(port, 10)
}

// StatItems describes the frontends (status, maxconn) and servers (status,
// weight, address, maxconn) of show_stat rows; backends and listeners
// follow from them and are not compared.
func StatItems(rows []haproxy.StatRow) []Item {
	// Columns are looked up once per answer, numbers kept as HAProxy wrote
	// them, every item's fields share one array and the servers' keys one
	// string: a few allocations per answer, none per row.
	pxname, svname, status := haproxy.Column("pxname"), haproxy.Column("svname"), haproxy.Column("status")
	weight, addr, slim := haproxy.Column("weight"), haproxy.Column("addr"), haproxy.Column("slim")
	var out []Item
	var fields []Field
	// keys are written one after the other and cut from what was written:
	// a Builder never changes bytes it has handed out, even as it grows.
	var keys strings.Builder
	for _, r := range rows {
		typ := r.Type()
		if typ != "frontend" && typ != "server" {
			continue
		}
		if out == nil {
			out = make([]Item, 0, len(rows))
		}
		var f []Field
		switch typ {
		case "frontend":
			f = take(&fields, len(rows), Field{FieldStatus, status.Str(r)}, Field{FieldMaxconn, maxconnText(slim.IntString(r))})
			out = append(out, Item{Kind: KindFrontend, Key: pxname.Str(r), Fields: f})
		case "server":
			f = take(&fields, len(rows), Field{FieldStatus, status.Str(r)}, Field{FieldWeight, weight.IntString(r)},
				Field{FieldAddress, addr.Str(r)}, Field{FieldMaxconn, maxconnText(slim.IntString(r))})
			if keys.Cap() == 0 {
				keys.Grow(32 * len(rows))
			}
			start := keys.Len()
			keys.WriteString(pxname.Str(r))
			keys.WriteByte('/')
			keys.WriteString(svname.Str(r))
			out = append(out, Item{Kind: KindServer, Key: keys.String()[start:], Fields: f})
		}
	}
	return out
}

// take appends fs to the shared array *slab (made for rows items of up to
// four fields) and returns them, capped so that an append to one item's
// fields never writes into the next item's.
func take(slab *[]Field, rows int, fs ...Field) []Field {
	if cap(*slab)-len(*slab) < len(fs) {
		*slab = make([]Field, 0, max(4*rows, len(fs)))
	}
	start := len(*slab)
	*slab = append(*slab, fs...)
	return (*slab)[start:len(*slab):len(*slab)]
}

// maxconnText is maxconn on a number's text: an empty cell (no limit
// reported, as the stats page leaves it) reads "unlimited" too.
func maxconnText(n string) string {
	if n == "0" || n == "" {
		return "unlimited"
	}
	return n
}

// Operational states of "show servers state" (srv_op_state).
var opStates = map[int64]string{0: "stopped", 1: "starting", 2: "running", 3: "stopping"}

// StateItems describes "show servers state" rows: administrative state
// (ready, drain, maint), operational state, user weight, address and port.
func StateItems(rows []map[string]any) []Item {
	out := make([]Item, 0, len(rows))
	for _, r := range rows {
		be, _ := r["be_name"].(string)
		name, _ := r["srv_name"].(string)
		addr, _ := r["srv_addr"].(string)
		port, _ := r["srv_port"].(int64)
		op, _ := r["srv_op_state"].(int64)
		adm, _ := r["srv_admin_state"].(int64)
		w, _ := r["srv_uweight"].(int64)
		opName, ok := opStates[op]
		if !ok {
			opName = strconv.FormatInt(op, 10)
		}
		out = append(out, Item{Kind: KindServer, Key: be + "/" + name, Fields: []Field{
			{FieldAdminState, haproxy.AdminStateName(adm)},
			{FieldOpState, opName},
			{FieldWeight, strconv.FormatInt(w, 10)},
			{FieldAddress, hostPort(addr, port)},
		}})
	}
	return out
}

// MapItems describes map entries (key → value) as show_map lists them.
func MapItems(entries []haproxy.PatternEntry) []Item {
	out := make([]Item, 0, len(entries))
	for _, e := range entries {
		out = append(out, Item{Kind: KindMapEntry, Key: e.Key, Fields: []Field{{FieldValue, e.Value}}})
	}
	return out
}

// ACLItems describes ACL entries: only their presence is compared.
func ACLItems(entries []haproxy.PatternEntry) []Item {
	out := make([]Item, 0, len(entries))
	for _, e := range entries {
		out = append(out, Item{Kind: KindACLEntry, Key: e.Key})
	}
	return out
}

// LookupItem describes one get_map/get_acl answer for sample: whether it
// matched ("true" or "false": HAProxy says found=yes for a map, match=yes
// for an ACL) and, for a map, the value it gave.
func LookupItem(kind haproxy.MapKind, sample string, answer map[string]any) Item {
	k := KindMapEntry
	if kind == haproxy.KindACL {
		k = KindACLEntry
	}
	it := Item{Kind: k, Key: sample, Fields: []Field{{FieldMatch, strconv.FormatBool(Matched(answer))}}}
	if kind == haproxy.KindMap {
		v, _ := answer["value"].(string)
		it.Fields = append(it.Fields, Field{FieldValue, v})
	}
	return it
}

// Matched reports whether a get_map/get_acl answer matched.
func Matched(answer map[string]any) bool {
	return answer["found"] == "yes" || answer["match"] == "yes"
}

// ServerDetailItem describes get_server's server: as ServerItems, plus its
// administrative state when the runtime API gave its state row.
func ServerDetailItem(d haproxy.ServerDetail) Item {
	it := ServerItems([]haproxy.Server{d.Server})[0]
	if adm, ok := d.State["srv_admin_state"].(int64); ok {
		it.Fields = append(it.Fields, Field{FieldAdminState, haproxy.AdminStateName(adm)})
	}
	return it
}
