package fleet

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfleet/mcpfleet/proxymcp/internal/haproxy"
)

// randomItems gives n instances' items over a few shared objects: most
// instances list them in the same order with the same values, others
// shuffle them, leave some out, list one twice, change a value, add or drop
// a field, or use another kind with the same key.
func randomItems(r *rand.Rand, n int) ([]string, map[string][]Item) {
	names := make([]string, n)
	items := map[string][]Item{}
	objects := r.IntN(12)
	for j := range names {
		names[j] = fmt.Sprintf("lb%d", j+1)
		var list []Item
		for o := 0; o < objects; o++ {
			if r.IntN(10) == 0 {
				continue // absent here
			}
			kind := KindServer
			if o%5 == 4 {
				kind = KindMapEntry
			}
			if r.IntN(40) == 0 {
				kind = KindFrontend
			}
			it := Item{Kind: kind, Key: fmt.Sprintf("be/s%d", o), Fields: []Field{
				{FieldStatus, []string{"UP", "UP", "UP", "DOWN", ""}[r.IntN(5)*min(1, r.IntN(4))]},
				{FieldWeight, fmt.Sprint(1 + r.IntN(2)*r.IntN(2))},
				{FieldAddress, fmt.Sprintf("10.0.0.%d:80", o+r.IntN(2)*r.IntN(3))},
			}}
			switch r.IntN(12) {
			case 0:
				it.Fields = it.Fields[:2]
			case 1:
				it.Fields = append(it.Fields, Field{FieldMaxconn, "unlimited"})
			case 2:
				it.Fields[0], it.Fields[1] = it.Fields[1], it.Fields[0]
			case 3:
				it.Fields = nil
			}
			list = append(list, it)
			if r.IntN(15) == 0 {
				dup := it
				dup.Fields = slices.Clone(it.Fields)
				if len(dup.Fields) > 0 {
					dup.Fields[0].Value += "x"
				}
				list = append(list, dup)
			}
		}
		if r.IntN(4) == 0 {
			r.Shuffle(len(list), func(a, b int) { list[a], list[b] = list[b], list[a] })
		}
		if r.IntN(8) != 0 { // an instance with nothing may also have no entry
			items[names[j]] = list
		}
	}
	return names, items
}

// TestDivergeMatchesReference: Diverge gives exactly what the code before
// the allocation work gave (divergeRef), on thousands of item sets.
func TestDivergeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 14))
	for i := 0; i < 5000; i++ {
		names, items := randomItems(r, 1+r.IntN(6))
		got, want := Diverge(names, items), divergeRef(names, items)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (%v, %v):\n got %+v\nwant %+v", i, names, items, got, want)
		}
	}
}

// TestStatItemsMatchesReference: StatItems describes rows exactly as the
// code that read every cell by name did, whatever the cells hold, and no
// item's fields share spare capacity with the next item's.
func TestStatItemsMatchesReference(t *testing.T) {
	for _, in := range []string{
		"# pxname,svname,status\n",
		"# pxname,svname,status,weight,slim,type,addr\nbe,BACKEND,UP,1,10,1,\nbe,lst,OPEN,,,3,\n", // no frontend, no server
		"# pxname,svname,qcur,slim,status,weight,type,addr,-,\n" +
			"fe,FRONTEND,,9974,OPEN,,0,,,\n" +
			"fe2,FRONTEND,,0,OPEN,,0,,,\n" +
			"fe3,FRONTEND,,,OPEN,,0,,,\n" +
			"be,s1,,0,UP,100,2,10.0.0.1:80,,\n" +
			"be,s2,,007,DOWN,+5,2,[::1]:80,,\n" +
			"be,s3,,-0,MAINT,-0,2,,,\n" +
			"be,s4,,99999999999999999999,\"DOWN, and \"\"worse\"\"\",abc,2,x,,\n" +
			"be,s5\n" +
			"be,BACKEND,,10,UP,100,1,,,\n" +
			"be,s6,,-3,UP,-9223372036854775808,2,h:1,,\n",
		// columns in another order, weight missing
		"# type,addr,status,svname,pxname,slim\n2,1.2.3.4:5,UP,s,be,12\n0,,OPEN,FRONTEND,fe,\n",
	} {
		rows, err := haproxy.ParseStatCSV([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		got, want := StatItems(rows), statItemsRef(rows)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %+v\nwant %+v", in, got, want)
		}
		for i, it := range got {
			if cap(it.Fields) != len(it.Fields) {
				t.Errorf("%q item %d: fields have spare capacity %d: an append would write into the next item", in, i, cap(it.Fields)-len(it.Fields))
			}
		}
	}
}

// TestDivergeSummaryWithManyFields: more differing fields than the
// summary's stack arrays hold still read in order.
func TestDivergeSummaryWithManyFields(t *testing.T) {
	var fa, fb []Field
	for i := 0; i < 11; i++ {
		fa = append(fa, Field{fmt.Sprintf("f%02d", i), "a"})
		fb = append(fb, Field{fmt.Sprintf("f%02d", i), "b"})
	}
	names := []string{"x", "y"}
	items := map[string][]Item{"x": {{Kind: KindServer, Key: "k", Fields: fa}}, "y": {{Kind: KindServer, Key: "k", Fields: fb}}}
	got := Diverge(names, items)
	if !reflect.DeepEqual(got, divergeRef(names, items)) || len(got) != 1 || len(got[0].Differences) != 11 ||
		!strings.HasPrefix(got[0].Summary, "k: x a a a") {
		t.Errorf("%+v", got)
	}
}
