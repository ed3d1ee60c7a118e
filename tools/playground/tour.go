package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// step is one call of the tour, with a line saying what it shows.
type step struct {
	server string
	says   string
	run    func(ctx context.Context, cs *mcp.ClientSession) (string, error)
}

// tour drives every running server through a real MCP client (the official
// Go SDK over streamable HTTP) and prints each result compactly.
func (p *playground) tour(ctx context.Context) bool {
	fmt.Println("\nTour (a real MCP client over streamable HTTP):")
	sessions := map[string]*mcp.ClientSession{}
	ok := true
	for _, s := range p.servers {
		var opts *mcp.ClientOptions
		if s.name == "proxymcp" {
			// The tour client can ask its person (elicitation): proxymcp
			// asks it to approve the destructive step of the tour.
			opts = &mcp.ClientOptions{ElicitationHandler: p.person}
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "mcpfleet-playground", Version: "tour"}, opts)
		// The SDK keeps using the connect context for the session.
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port), DisableStandaloneSSE: true}, nil)
		if err != nil {
			fmt.Printf("  ✗ %s: connect: %v\n", s.name, err)
			ok = false
			continue
		}
		defer cs.Close()
		sessions[s.name] = cs
	}
	for _, st := range p.steps() {
		cs := sessions[st.server]
		if cs == nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		out, err := st.run(sctx, cs)
		cancel()
		if err != nil {
			fmt.Printf("  ✗ [%s] %s\n      %v\n", st.server, st.says, err)
			ok = false
			continue
		}
		fmt.Printf("  ✓ [%s] %s\n", st.server, st.says)
		for _, line := range strings.Split(out, "\n") {
			fmt.Printf("      %s\n", line)
		}
	}
	for _, name := range p.skipped {
		fmt.Printf("  - [%s] skipped (see above)\n", name)
	}
	if len(p.skipped) > 0 {
		ok = false
	}
	if ok {
		fmt.Println("\nEvery step succeeded.")
	} else {
		fmt.Println("\nSome steps failed or were skipped; the logs say why.")
	}
	return ok
}

func (p *playground) steps() []step {
	return []step{
		{"streammcp", "overview: live brokers, partition counts, the under-replicated one and the overall label",
			readJSON("stream-mcp://overview", "broker_count", "offline_broker_ids", "topic_count", "partition_count", "under_replicated_partitions", "offline_partitions", "health_status")},
		{"streammcp", "health-check: one label per area and the worst of them",
			readJSON("stream-mcp://health-check", "broker_status", "partition_status", "consumer_status", "overall_status")},
		{"streammcp", "under-replicated partitions: which replicas fell out of the ISR, and advice",
			readReport("stream-mcp://under-replicated-partitions", underReplicated)},
		{"streammcp", "consumer lag (threshold 1000): the groups that fell behind",
			readReport("stream-mcp://consumer-lag-report", consumerLag)},
		{"streammcp", "the fleet at a glance: every Kafka cluster, read concurrently (stream-mcp://clusters)",
			readFleet},
		{"proxymcp", "the servers of both HAProxy instances, lb1 and lb2, and their health (one fails its check on purpose)", p.listServers},
		{"proxymcp", fmt.Sprintf("drain %s/%s on both instances, then make it ready again", p.drain[0], p.drain[1]), p.drainAndReady},
		{"proxymcp", fmt.Sprintf("a divergence: %s/%s drained on lb2 only, found by list_servers, then healed", p.drain[0], p.drain[1]), p.divergence},
		{"proxymcp", "an approval: del_map_entry is destructive, so proxymcp asks the tour's person once, with both instances' state in the preview; they accept and the entry is gone from both", p.approvedDelete},
		{"sqlmcp", "tables in the sample catalog", p.listTables},
		{"sqlmcp", "a SQL query on the Trino-protocol engine", p.query},
		{"codermcp", "ping", callText("ping", map[string]any{"message": "hello from the playground"})},
		{"codermcp", "a coder turn through the real Codex CLI", callText("coder", map[string]any{"prompt": "Say hello to the playground in one sentence.", "sandbox": "read-only"})},
	}
}

func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	joined := strings.Join(text, "\n")
	if res.IsError {
		return res, joined, fmt.Errorf("%s returned an error: %s", name, joined)
	}
	return res, joined, nil
}

func callText(name string, args map[string]any) func(context.Context, *mcp.ClientSession) (string, error) {
	return func(ctx context.Context, cs *mcp.ClientSession) (string, error) {
		_, text, err := call(ctx, cs, name, args)
		return clip(text, 400), err
	}
}

// readJSON reads a resource and prints the named fields compactly.
func readJSON(uri string, fields ...string) func(context.Context, *mcp.ClientSession) (string, error) {
	return func(ctx context.Context, cs *mcp.ClientSession) (string, error) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", fmt.Errorf("read %s: %w", uri, err)
		}
		if len(res.Contents) == 0 {
			return "", fmt.Errorf("read %s: no contents", uri)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
			return "", fmt.Errorf("read %s: %w", uri, err)
		}
		var lines []string
		for _, f := range fields {
			b, _ := json.Marshal(m[f])
			lines = append(lines, f+": "+clip(string(b), 300))
		}
		return strings.Join(lines, "\n"), nil
	}
}

// readReport reads a resource and lets show print it.
func readReport(uri string, show func(r report) []string) func(context.Context, *mcp.ClientSession) (string, error) {
	return func(ctx context.Context, cs *mcp.ClientSession) (string, error) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", fmt.Errorf("read %s: %w", uri, err)
		}
		if len(res.Contents) == 0 {
			return "", fmt.Errorf("read %s: no contents", uri)
		}
		var r report
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &r); err != nil {
			return "", fmt.Errorf("read %s: %w", uri, err)
		}
		return strings.Join(show(r), "\n"), nil
	}
}

// report holds the fields of the stream-mcp:// reports the tour prints.
type report struct {
	Details []struct {
		Topic     string `json:"topic"`
		Partition int    `json:"partition"`
		Leader    int    `json:"leader"`
		Replicas  []int  `json:"replicas"`
		ISR       []int  `json:"isr"`
		Missing   []int  `json:"missing_replicas"`
	} `json:"details"`
	Groups []struct {
		ID       string `json:"group_id"`
		State    string `json:"state"`
		Members  int    `json:"member_count"`
		TotalLag int64  `json:"total_lag"`
		HighLag  bool   `json:"has_high_lag"`
	} `json:"group_summary"`
	Recommendations []string `json:"recommendations"`
}

func underReplicated(r report) []string {
	var lines []string
	for _, d := range r.Details {
		lines = append(lines, fmt.Sprintf("%s/%d leader %d replicas %v isr %v missing %v", d.Topic, d.Partition, d.Leader, d.Replicas, d.ISR, d.Missing))
	}
	for _, rec := range r.Recommendations {
		lines = append(lines, "advice: "+clip(rec, 160))
	}
	return lines
}

func consumerLag(r report) []string {
	var lines []string
	for _, g := range r.Groups {
		flag := ""
		if g.HighLag {
			flag = "  ← above the threshold"
		}
		lines = append(lines, fmt.Sprintf("%-18s %-8s members %d  total lag %d%s", g.ID, g.State, g.Members, g.TotalLag, flag))
	}
	return lines
}

// readFleet prints one line per cluster of the stream-mcp://clusters document.
func readFleet(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	const uri = "stream-mcp://clusters"
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", uri, err)
	}
	if len(res.Contents) == 0 {
		return "", fmt.Errorf("read %s: no contents", uri)
	}
	var fleet struct {
		Clusters []struct {
			Cluster  string `json:"cluster"`
			Health   string `json:"health_status"`
			Brokers  *int   `json:"broker_count"`
			Offline  []int  `json:"offline_broker_ids"`
			URP      *int   `json:"under_replicated_partitions"`
			HighLag  *int   `json:"groups_with_high_lag"`
			ErrorMsg string `json:"error"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &fleet); err != nil {
		return "", fmt.Errorf("read %s: %w", uri, err)
	}
	n := func(p *int) string {
		if p == nil {
			return "?"
		}
		return fmt.Sprint(*p)
	}
	var lines []string
	for _, c := range fleet.Clusters {
		line := fmt.Sprintf("%-8s %-8s brokers %s offline %v  under-replicated %s  groups with high lag %s",
			c.Cluster, c.Health, n(c.Brokers), c.Offline, n(c.URP), n(c.HighLag))
		if c.ErrorMsg != "" {
			line += "  error: " + clip(c.ErrorMsg, 120)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), nil
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}

func (p *playground) listServers(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, text, err := call(ctx, cs, "list_servers", map[string]any{})
	if err != nil {
		return "", err
	}
	return summariseServers(res, text), nil
}

// summariseServers prints one line per server from list_servers' result.
func summariseServers(res *mcp.CallToolResult, text string) string {
	var v any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &v)
	} else {
		json.Unmarshal([]byte(text), &v)
	}
	var rows []map[string]any
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			if _, ok := t["status"]; ok {
				if _, ok := t["name"]; ok {
					rows = append(rows, t)
					return
				}
			}
			for _, k := range sortedKeys(t) {
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	if len(rows) == 0 {
		return clip(text, 400)
	}
	var lines []string
	for _, r := range rows {
		who := ""
		if in, ok := r["instance"]; ok {
			who = fmt.Sprintf("%v: ", in)
		}
		lines = append(lines, fmt.Sprintf("%s%v/%v  %v  weight=%v  check=%v", who, first(r, "backend", "proxy"), r["name"], r["status"], first(r, "weight"), first(r, "check_status", "check")))
	}
	return strings.Join(lines, "\n")
}

func first(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil && v != "" {
			return v
		}
	}
	return "-"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (p *playground) drainAndReady(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	be, srv := p.drain[0], p.drain[1]
	var lines []string
	for _, state := range []string{"drain", "ready"} {
		res, _, err := call(ctx, cs, "set_server_state", map[string]any{"backend": be, "server": srv, "state": state})
		if err != nil {
			return "", err
		}
		var w struct {
			AppliedOn []string `json:"applied_on"`
		}
		structuredInto(res, &w)
		res, _, err = call(ctx, cs, "get_server", map[string]any{"backend": be, "server": srv})
		if err != nil {
			return "", err
		}
		var r struct {
			Instances []struct {
				Instance string         `json:"instance"`
				Source   string         `json:"source"`
				Server   map[string]any `json:"server"`
			} `json:"instances"`
		}
		structuredInto(res, &r)
		var st []string
		for _, in := range r.Instances {
			st = append(st, fmt.Sprintf("%s %v (source %s)", in.Instance, first(in.Server, "status"), in.Source))
		}
		lines = append(lines, fmt.Sprintf("after set_server_state %-5s (applied on %s) → %s", state, strings.Join(w.AppliedOn, ", "), strings.Join(st, ", ")))
	}
	return strings.Join(lines, "\n"), nil
}

// divergence changes one instance only, shows that list_servers finds it,
// then heals it and shows the instances agree again.
func (p *playground) divergence(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	be, srv := p.drain[0], p.drain[1]
	var lines []string
	diverged := func() ([]string, error) {
		res, _, err := call(ctx, cs, "list_servers", map[string]any{"backend": be})
		if err != nil {
			return nil, err
		}
		var out struct {
			Divergence []struct {
				Object      string                       `json:"object"`
				Differences map[string]map[string]string `json:"differences"`
			} `json:"divergence"`
		}
		structuredInto(res, &out)
		// Each playground HAProxy has test servers of its own, so their
		// addresses differ by construction: the tour looks at the states.
		var s []string
		for _, d := range out.Divergence {
			if st, ok := d.Differences["status"]; ok {
				s = append(s, fmt.Sprintf("%s: lb1 %s, lb2 %s", d.Object, st["lb1"], st["lb2"]))
			}
		}
		return s, nil
	}
	if _, _, err := call(ctx, cs, "set_server_state", map[string]any{"backend": be, "server": srv, "state": "drain", "instance": "lb2"}); err != nil {
		return "", err
	}
	lines = append(lines, "set_server_state drain with instance lb2 only")
	d, err := diverged()
	if err != nil {
		return "", err
	}
	if len(d) == 0 {
		return "", fmt.Errorf("list_servers found no divergence after draining %s/%s on lb2 only", be, srv)
	}
	lines = append(lines, "list_servers divergence in status: "+strings.Join(d, "; "))
	if _, _, err := call(ctx, cs, "set_server_state", map[string]any{"backend": be, "server": srv, "state": "ready", "instance": []string{"lb2"}}); err != nil {
		return "", err
	}
	lines = append(lines, "healed: set_server_state ready with instance [lb2]")
	if d, err = diverged(); err != nil {
		return "", err
	}
	if len(d) != 0 {
		return "", fmt.Errorf("still divergent after healing: %s", strings.Join(d, "; "))
	}
	lines = append(lines, "list_servers divergence in status: none, lb1 and lb2 agree")
	return strings.Join(lines, "\n"), nil
}

// structuredInto decodes a result's structured content into v.
func structuredInto(res *mcp.CallToolResult, v any) {
	if res == nil || res.StructuredContent == nil {
		return
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, v)
}

func (p *playground) listTables(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, text, err := call(ctx, cs, "list_tables", map[string]any{"catalog": p.sqlCatalog, "schema": p.sqlSchema})
	if err != nil {
		return "", err
	}
	var out struct {
		Catalog string `json:"catalog"`
		Schema  string `json:"schema"`
		Tables  []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"tables"`
	}
	if b, err := json.Marshal(res.StructuredContent); err == nil && res.StructuredContent != nil {
		json.Unmarshal(b, &out)
	} else {
		json.Unmarshal([]byte(text), &out)
	}
	var names []string
	for _, t := range out.Tables {
		names = append(names, t.Name+" ("+t.Type+")")
	}
	for _, t := range out.Tables {
		if p.sqlTable == "" || t.Name == "orders" {
			p.sqlTable = t.Name
		}
	}
	return fmt.Sprintf("%s.%s: %s", out.Catalog, out.Schema, strings.Join(names, ", ")), nil
}

func (p *playground) query(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	q := "SELECT 1 AS one, 'hello' AS greeting"
	if p.sqlTable != "" {
		q = fmt.Sprintf(`SELECT * FROM "%s" LIMIT 3`, strings.ReplaceAll(p.sqlTable, `"`, `""`))
	}
	_, text, err := call(ctx, cs, "execute_query", map[string]any{"query": q, "limit": 3})
	if err != nil {
		return "", err
	}
	var r struct {
		Columns []struct{ Name, Type string } `json:"columns"`
		Rows    [][]any                       `json:"rows"`
		Count   int                           `json:"row_count"`
		Trunc   bool                          `json:"truncated"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // bigints stay exact
	dec.Decode(&r)
	var cols []string
	for _, c := range r.Columns {
		cols = append(cols, c.Name+" "+c.Type)
	}
	lines := []string{q, "columns: " + strings.Join(cols, ", ")}
	for _, row := range r.Rows {
		b, _ := json.Marshal(row)
		lines = append(lines, clip(string(b), 200))
	}
	lines = append(lines, fmt.Sprintf("row_count %d, truncated %v", r.Count, r.Trunc))
	return strings.Join(lines, "\n"), nil
}

// person is the tour client's person: it keeps the approval request it was
// shown, to print it, and accepts.
func (p *playground) person(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.askedMu.Lock()
	p.asked = append(p.asked, req.Params.Message)
	p.askedMu.Unlock()
	return &mcp.ElicitResult{Action: "accept"}, nil
}

// approvedDelete adds a map entry (a change: no approval under the default
// MCP_APPROVAL=destructive), deletes it (destructive: the person is asked)
// and shows that it is gone.
func (p *playground) approvedDelete(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, text, err := call(ctx, cs, "list_maps", nil)
	if err != nil {
		return "", err
	}
	var maps struct {
		Maps []struct {
			ID int64 `json:"id"`
		} `json:"maps"`
	}
	if structuredInto(res, &maps); len(maps.Maps) == 0 {
		return "", fmt.Errorf("list_maps: no map to use: %s", clip(text, 200))
	}
	// By id: the same map on both instances, whose files have their own paths here.
	m := fmt.Sprintf("#%d", maps.Maps[0].ID)
	const key = "tour.example"
	if _, _, err := call(ctx, cs, "add_map_entry", map[string]any{"map": m, "key": key, "value": "be_app"}); err != nil {
		return "", err
	}
	p.askedMu.Lock()
	p.asked = nil
	p.askedMu.Unlock()
	if _, _, err := call(ctx, cs, "del_map_entry", map[string]any{"map": m, "key": key}); err != nil {
		return "", err
	}
	p.askedMu.Lock()
	asked := append([]string(nil), p.asked...)
	p.askedMu.Unlock()
	if len(asked) != 1 {
		return "", fmt.Errorf("the person was asked %d times, want once", len(asked))
	}
	res, _, err = call(ctx, cs, "show_map", map[string]any{"map": m})
	if err != nil {
		return "", err
	}
	var after struct {
		Entries []struct {
			Instance string `json:"instance"`
			Key      string `json:"key"`
		} `json:"entries"`
	}
	structuredInto(res, &after)
	if len(after.Entries) == 0 {
		return "", fmt.Errorf("show_map %s listed no entries at all", m)
	}
	for _, e := range after.Entries {
		if e.Key == key {
			return "", fmt.Errorf("the person accepted but %s is still in %s on %s", key, m, e.Instance)
		}
	}
	lines := []string{"the person was asked:"}
	for _, l := range strings.Split(asked[0], "\n") {
		lines = append(lines, "  │ "+l)
	}
	lines = append(lines, "they accepted; show_map no longer lists "+key+" on either instance")
	return strings.Join(lines, "\n"), nil
}
