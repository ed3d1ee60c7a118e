package haproxy

// Test helpers over StatRow: production code reads rows through Str, Int,
// Type and StatColumn.

// record returns the row's cells, as encoding/csv would read them.
func (r StatRow) record() []string {
	out := make([]string, len(r.ends))
	for i := range out {
		out[i] = r.at(i)
	}
	return out
}

// Get returns a column's value (int64 or string) and whether it is set.
func (r StatRow) Get(name string) (any, bool) {
	if name == "object_type" {
		t := r.Type()
		return t, t != ""
	}
	v, ok := r.cell(name)
	if !ok {
		return nil, false
	}
	if n, isNum := r.num(r.h.index[name]); isNum {
		return n, true
	}
	return v, true
}
