package envconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Members is the one grammar for a server that talks to several back ends
// (HAProxy instances, Kafka clusters): a list variable names them,
//
//	<PREFIX>_<LIST>=lb1,lb2
//
// and each member reads <PREFIX>_<NAME>_<VAR> for every variable of Own,
// falling back to the unprefixed <PREFIX>_<VAR> when its own is unset or
// blank. NAME is the member's name upper-cased with - as _. Without the
// list variable there is one member, DefaultName, read from the unprefixed
// variables alone: one back end is a fleet of one.
type Members struct {
	// Prefix starts every variable: "PROXY", "STREAM".
	Prefix string
	// List is the list variable without the prefix: "INSTANCES" for
	// PROXY_INSTANCES.
	List string
	// Noun is what a member is called in messages: "instance", "cluster".
	Noun string
	// Arg is the tool argument that names members ("instance",
	// "cluster"); Noun when empty.
	Arg string
	// Own lists the unprefixed variables a member may set for itself
	// ("PROXY_RUNTIME_URL"); every other variable is shared by the fleet.
	Own []string
	// Target is what a call that names no member uses.
	Target Target
}

// Target is a server's default-target rule: what a call that names no
// member (an omitted instance or cluster argument) runs on.
type Target int

const (
	// EveryMember: a call without members runs on every member, and the
	// word All names them all (so no member may be called that). proxymcp.
	EveryMember Target = iota
	// FirstMember: a call without a member uses the first one listed, the
	// default member. streammcp.
	FirstMember
)

// DefaultName names the one member of a server configured without the list
// variable.
const DefaultName = "default"

// All selects every member where the target rule is EveryMember.
const All = "all"

// NamePattern is what a member may be called: every name either server
// accepted before the grammar was shared (proxymcp: letters of either case,
// digits and _, at most 32; streammcp: lowercase letters, digits, - and _,
// at most 63), so letters, digits, _ and -, first a letter or digit, at
// most 63. Names become part of variable names (- as _) and of URIs.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)

// ListVar is the list variable: PROXY_INSTANCES.
func (m Members) ListVar() string { return m.Prefix + "_" + m.List }

// Var returns member name's own variable for the unprefixed one:
// Var("prod-eu", "STREAM_BROKERS") is STREAM_PROD_EU_BROKERS.
func (m Members) Var(name, unprefixed string) string {
	return m.varPrefix(name) + strings.TrimPrefix(unprefixed, m.Prefix+"_")
}

func (m Members) varPrefix(name string) string {
	return m.Prefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_"
}

func (m Members) arg() string {
	if m.Arg != "" {
		return m.Arg
	}
	return m.Noun
}

// Read reads the list variable; a problem with it is recorded in r and
// the names that are fine are kept, so every problem is reported at once.
func (m Members) Read(r *Reader) *Fleet {
	f := &Fleet{m: m, r: r, shared: map[string]bool{}}
	raw := r.Lookup(m.ListVar())
	if raw == "" {
		f.Names = []string{DefaultName}
		return f
	}
	f.Named = true
	byPrefix := map[string]string{}
	rule := fmt.Sprintf("comma-separated %s names of letters, digits, _ and - (first a letter or digit, at most 63 characters), e.g. a,b", m.Noun)
	for _, name := range strings.Split(raw, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			r.Fail(m.ListVar(), raw, rule+`, without empty items; "" is not one`)
			continue
		case !NamePattern.MatchString(name):
			r.Fail(m.ListVar(), raw, fmt.Sprintf("%s; %q is not one", rule, name))
			continue
		case m.Target == EveryMember && strings.EqualFold(name, All):
			r.Fail(m.ListVar(), raw, fmt.Sprintf("%s names other than %q, which selects every %s", m.Noun, All, m.Noun))
			continue
		}
		p := m.varPrefix(name)
		if prev, dup := byPrefix[p]; dup {
			r.Fail(m.ListVar(), raw, fmt.Sprintf("distinct %s names: %q and %q both read %s* variables", m.Noun, prev, name, p))
			continue
		}
		byPrefix[p] = name
		f.Names = append(f.Names, name)
	}
	return f
}

// Fleet is the members a server was configured with.
type Fleet struct {
	// Names are the members in list order; [DefaultName] without the list
	// variable. The first is the default member under FirstMember.
	Names []string
	// Named is true when the list variable named the members.
	Named bool

	m      Members
	r      *Reader
	shared map[string]bool // fleet-wide problems already recorded
}

// Member returns the reader of one member's variables. Its typed readers
// (String, Bool, Duration, Int, List...) take the unprefixed name and read
// the member's own variable first: m.Duration("PROXY_STATS_TIMEOUT", ...)
// reads PROXY_LB1_STATS_TIMEOUT when that is one of Own and set, else
// PROXY_STATS_TIMEOUT. Call Done once the member is read. Without the
// list variable it reads the unprefixed variables directly, and problems
// are named as for a server without members.
func (f *Fleet) Member(name string) *Member {
	mem := &Member{Name: name, f: f, used: map[string]string{}}
	if !f.Named {
		mem.Reader = f.r
		return mem
	}
	mem.Reader = New(func(key string) string {
		if slices.Contains(f.m.Own, key) {
			own := f.m.Var(name, key)
			if v := f.r.Secret(own); strings.TrimSpace(v) != "" {
				mem.used[key] = own
				return v
			}
		}
		return f.r.Secret(key)
	})
	return mem
}

// Member reads one member's variables (see Fleet.Member).
type Member struct {
	*Reader
	Name string

	f    *Fleet
	used map[string]string // unprefixed variable → the member's own, when that was read
}

// Var is the member's own variable for unprefixed (the unprefixed one
// itself for the one member of a server without the list variable).
func (m *Member) Var(unprefixed string) string {
	if !m.f.Named {
		return unprefixed
	}
	return m.f.m.Var(m.Name, unprefixed)
}

// label names a member's variable in a problem: "instance lb1:
// PROXY_LB1_RUNTIME_URL".
func (m *Member) label(variable string) string {
	return m.f.m.Noun + " " + m.Name + ": " + variable
}

// FailOwn records a problem with the member's own variable for unprefixed,
// for a rule only the member can meet ("each instance needs its own
// runtime API address").
func (m *Member) FailOwn(unprefixed, value, accepted string) {
	if !m.f.Named {
		m.f.r.Fail(unprefixed, value, accepted)
		return
	}
	m.f.r.Fail(m.label(m.Var(unprefixed)), value, accepted)
}

// Done records the member's problems in the fleet's reader, each under the
// variable that was read and naming the member:
//
//	instance lb1: PROXY_LB1_RUNTIME_URL="http://x:1": invalid; accepted: …
//	instance lb1: PROXY_RUNTIME_URL (used because PROXY_LB1_RUNTIME_URL is unset)="nope://x": invalid; …
//	cluster dev: STREAM_DEV_BROKERS: not set; required: … (or set STREAM_BROKERS, which every cluster without its own falls back to)
//
// A problem with a fleet-wide variable is recorded once, as it is, however
// many members read it.
func (m *Member) Done() {
	if !m.f.Named {
		return
	}
	for _, p := range m.problems {
		switch {
		case !slices.Contains(m.f.m.Own, p.Name):
			key := p.String()
			if m.f.shared[key] {
				continue
			}
			m.f.shared[key] = true
		case m.used[p.Name] != "":
			p.Name = m.label(m.used[p.Name])
		case p.Value == "":
			p.Accepted = fmt.Sprintf("%s (or set %s, which every %s without its own falls back to)", p.Accepted, p.Name, m.f.m.Noun)
			p.Name = m.label(m.Var(p.Name))
		default:
			p.Name = m.label(fmt.Sprintf("%s (used because %s is unset)", p.Name, m.Var(p.Name)))
		}
		m.f.r.problems = append(m.f.r.problems, p)
	}
	m.problems = nil
}

// Select resolves a tool call's member argument: the members named, in
// configured order, each once. No names select the target rule's default
// (every member, or the first); under EveryMember the word All selects
// every member. A name that is not configured is an *UnknownMemberError
// and selects nothing.
func (f *Fleet) Select(names ...string) ([]string, error) {
	if len(names) == 0 {
		if f.m.Target == FirstMember {
			return f.Names[:1], nil
		}
		return f.Names, nil
	}
	if f.m.Target == EveryMember && slices.Contains(names, All) {
		return f.Names, nil
	}
	want := make([]bool, len(f.Names))
	for _, n := range names {
		i := slices.Index(f.Names, n)
		if i < 0 {
			return nil, &UnknownMemberError{Name: n, Known: slices.Clone(f.Names), m: f.m}
		}
		want[i] = true
	}
	var out []string
	for i, n := range f.Names {
		if want[i] {
			out = append(out, n)
		}
	}
	return out, nil
}

// UnknownMemberError is a tool argument naming a member the server was not
// configured with. Its text names the configured members and how to pick
// the default:
//
//	unknown cluster "qa": the configured clusters are prod, dev (STREAM_CLUSTERS); omit cluster for the default one, prod
//	unknown instance "lb9": the configured instances are lb1, lb2 (PROXY_INSTANCES); omit instance or use "all" for every one
type UnknownMemberError struct {
	Name  string   // as given
	Known []string // the configured members, in order
	m     Members
}

func (e *UnknownMemberError) Error() string {
	hint := fmt.Sprintf("omit %s or use %q for every one", e.m.arg(), All)
	if e.m.Target == FirstMember {
		hint = fmt.Sprintf("omit %s for the default one, %s", e.m.arg(), e.Known[0])
	}
	return fmt.Sprintf("unknown %s %s: the configured %ss are %s (%s); %s",
		e.m.Noun, quoteShort(e.Name), e.m.Noun, strings.Join(e.Known, ", "), e.m.ListVar(), hint)
}

// maxQuoted bounds a caller's value echoed in an error: enough to
// recognise it, never a megabyte back to the client and into the log.
const maxQuoted = 64

// quoteShort quotes s (Go syntax, so invisible and look-alike characters
// show as escapes), cut to maxQuoted runes with its full length said.
func quoteShort(s string) string {
	r := []rune(s)
	if len(r) <= maxQuoted {
		return strconv.QuoteToASCII(s)
	}
	return fmt.Sprintf("%s… (%d characters)", strconv.QuoteToASCII(string(r[:maxQuoted])), len(r))
}
