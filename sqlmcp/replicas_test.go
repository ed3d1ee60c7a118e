package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/e2e"
	"github.com/mcpfleet/mcpfleet/shared/e2e/lb"
	"github.com/mcpfleet/mcpfleet/shared/state"
	"github.com/mcpfleet/mcpfleet/shared/state/redistest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// replicaHeartbeat is MCP_TASK_HEARTBEAT of the replicas: a dead replica's
// task is failed after 3 of them.
const replicaHeartbeat = 300 * time.Millisecond

const replicaSecret = "replicas-approval-secret-0123456789abcdef"

// fleet is Redis, three built sqlmcp replicas sharing it and one approval
// secret, and HAProxy in front of them running the README's configuration.
type fleet struct {
	t        *testing.T
	bin      string
	redis    *redistest.Server
	replicas []*e2e.HTTPServer // by HAProxy server name order (sqlmcp1…)
	names    []string
	proxy    *lb.HAProxy
	env      []string
}

func startFleet(t *testing.T, persist bool, extra ...string) *fleet {
	t.Helper()
	f := &fleet{t: t, bin: e2e.Build(t, "."), redis: redistest.Start(t, persist)}
	f.env = engineEnv(t, append([]string{
		"MCP_STATE_URL=" + f.redis.URL(),
		"MCP_APPROVAL_SECRET=" + replicaSecret,
		"MCP_TASK_HEARTBEAT=" + replicaHeartbeat.String(),
		"SQLENGINE_ALLOW_WRITE_QUERIES=true",
		"LOG_LEVEL=warn",
	}, extra...)...)
	f.startReplicas()
	f.startProxy()
	return f
}

func (f *fleet) startReplicas() {
	f.replicas = nil
	for range 3 {
		f.replicas = append(f.replicas, e2e.StartHTTP(f.t, f.bin, f.env))
	}
}

// startProxy runs the README's block with the replicas' addresses, plus
// one test-only line naming the replica that answered.
func (f *fleet) startProxy() {
	t := f.t
	cfg := lb.ConfigBlock(t, "README.md", "<!-- replicas-haproxy-config")
	var addrs []string
	for _, r := range f.replicas {
		addrs = append(addrs, strings.TrimPrefix(r.Base, "http://"))
	}
	cfg = lb.Address(t, cfg, "{{bind}}", addrs)
	f.names = nil
	for _, l := range strings.Split(cfg, "\n") {
		if fs := strings.Fields(l); len(fs) >= 3 && fs[0] == "server" {
			f.names = append(f.names, fs[1])
		}
	}
	// Test only: which replica answered.
	cfg = strings.Replace(cfg, "backend sqlmcp\n", "backend sqlmcp\n    http-response set-header "+lb.ReplicaHeader+" %s\n", 1)
	f.proxy = lb.Start(t, cfg)
}

func (f *fleet) lbURL() string { return f.proxy.URL + "/mcp" }

// replica returns the replica HAProxy calls name.
func (f *fleet) replica(name string) *e2e.HTTPServer {
	i := slices.Index(f.names, name)
	if i < 0 {
		f.t.Fatalf("no replica named %q (answers carry %s)", name, lb.ReplicaHeader)
	}
	return f.replicas[i]
}

func call(t *testing.T, c *lb.Client, method string, params map[string]any) lb.Answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a, err := c.Call(ctx, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return a
}

type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
}

func createTask(t *testing.T, c *lb.Client, q string) (wireTask, lb.Answer) {
	t.Helper()
	a := call(t, c, "tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": q}, "task": map[string]any{}})
	var res struct {
		Task wireTask `json:"task"`
		wireTask
	}
	if a.Error != nil || json.Unmarshal(a.Result, &res) != nil {
		t.Fatalf("create a task: HTTP %d %s", a.HTTP, a.Raw)
	}
	tk := res.Task
	if tk.TaskID == "" {
		tk = res.wireTask
	}
	if tk.TaskID == "" {
		t.Fatalf("create a task: no task id in %s", a.Raw)
	}
	return tk, a
}

func getTask(t *testing.T, c *lb.Client, id string) (wireTask, lb.Answer) {
	t.Helper()
	a := call(t, c, "tasks/get", map[string]any{"taskId": id})
	var tk wireTask
	if a.Error == nil {
		json.Unmarshal(a.Result, &tk)
	}
	return tk, a
}

// waitTask polls until the task is no longer working and returns it and
// the replicas that answered the polls.
func waitTask(t *testing.T, c *lb.Client, id string, bound time.Duration) (wireTask, []string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	var seen []string
	for {
		tk, a := getTask(t, c, id)
		seen = append(seen, a.Replica)
		if a.Error == nil && tk.Status != "working" && tk.Status != "" {
			return tk, seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %q after %s: %s", id, tk.Status, bound, a.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func engineState(t *testing.T, sqlText string, want func(trinotest.QueryInfo) bool, bound time.Duration) trinotest.QueryInfo {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		for _, q := range trino.Queries() {
			if q.SQL == sqlText && want(q) {
				return q
			}
		}
		if time.Now().After(deadline) {
			var got []trinotest.QueryInfo
			for _, q := range trino.Queries() {
				if q.SQL == sqlText {
					got = append(got, q)
				}
			}
			t.Fatalf("the engine's query %q never reached the state wanted: %+v", sqlText, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// confirmCode asks for a DELETE through c and returns its confirmation code.
func confirmCode(t *testing.T, c *lb.Client, q string) string {
	t.Helper()
	a := call(t, c, "tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": q}})
	text := a.Raw
	i := strings.Index(text, `confirm: \"`)
	if i < 0 {
		t.Fatalf("no confirmation code in %s", text)
	}
	text = text[i+len(`confirm: \"`):]
	return text[:strings.Index(text, `\"`)]
}

func confirmOn(t *testing.T, url, q, code string) lb.Answer {
	t.Helper()
	return call(t, lb.NewModern(url), "tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": q, "confirm": code}})
}

func isToolError(a lb.Answer) (bool, string) {
	var r struct {
		IsError bool `json:"isError"`
	}
	json.Unmarshal(a.Result, &r)
	return r.IsError || a.Error != nil, a.Raw
}

// TestReplicasBehindHAProxy: Redis, three sqlmcp replicas and a real
// HAProxy in front running the README's configuration (round robin, no
// affinity for requests without a session), the Trino-protocol engine
// behind them.
func TestReplicasBehindHAProxy(t *testing.T) {
	f := startFleet(t, true)
	ctx := t.Context()

	t.Run("2026-07-28 task polled and fetched through other replicas", func(t *testing.T) {
		c := lb.NewModern(f.lbURL())
		q := "SELECT id, pause_ms(300) AS slept FROM warehouse.logs.events WHERE id <= 3 ORDER BY id"
		tk, created := createTask(t, c, q)
		done, seen := waitTask(t, c, tk.TaskID, 60*time.Second)
		if done.Status != "completed" {
			t.Fatalf("task ended %q", done.Status)
		}
		others := map[string]bool{}
		for _, r := range seen {
			if r != created.Replica {
				others[r] = true
			}
		}
		if len(others) == 0 {
			t.Errorf("every poll reached %s, the replica that created the task: no affinity expected (%v)", created.Replica, seen)
		}
		// 2026-07-28 has no tasks/result: tasks/get carries the rows
		// inline, on the replica that ran the task and on the others.
		for _, n := range f.names {
			if _, a := getTask(t, lb.NewModern(f.replica(n).MCPURL()), tk.TaskID); !strings.Contains(a.Raw, `\"rows\":[[1,300],[2,300],[3,300]]`) && !strings.Contains(a.Raw, `"rows":[[1,300],[2,300],[3,300]]`) {
				t.Errorf("tasks/get on %s (created on %s) without the rows inline: %s", n, created.Replica, a.Raw)
			}
		}
		// The result, through the balancer, until another replica gave it.
		var res lb.Answer
		for i := 0; i < 6; i++ {
			res = call(t, c, "tasks/result", map[string]any{"taskId": tk.TaskID})
			if res.Replica != created.Replica {
				break
			}
		}
		if res.Replica == created.Replica {
			t.Errorf("tasks/result always reached the creating replica %s", created.Replica)
		}
		if !strings.Contains(res.Raw, `"rows":[[1,300],[2,300],[3,300]]`) {
			t.Errorf("tasks/result from %s: %s", res.Replica, res.Raw)
		}
	})

	t.Run("2026-07-28 task cancelled from another replica", func(t *testing.T) {
		c := lb.NewModern(f.lbURL())
		q := slowQuery("cancelled_across_replicas")
		tk, created := createTask(t, c, q)
		engineState(t, q, func(qi trinotest.QueryInfo) bool { return qi.State == "RUNNING" || qi.State == "QUEUED" }, 30*time.Second)
		// Another replica, directly: the cancel cannot reach the one
		// running the query except through Redis.
		var other *e2e.HTTPServer
		for _, n := range f.names {
			if n != created.Replica {
				other = f.replica(n)
				break
			}
		}
		a := call(t, lb.NewModern(other.MCPURL()), "tasks/cancel", map[string]any{"taskId": tk.TaskID})
		if a.Error != nil || !strings.Contains(a.Raw, "cancelled") {
			t.Fatalf("tasks/cancel on another replica: %s", a.Raw)
		}
		qi := engineState(t, q, func(qi trinotest.QueryInfo) bool { return qi.State == "FAILED" }, 30*time.Second)
		if qi.ErrorName != "USER_CANCELED" || !qi.Cancelled {
			t.Errorf("the engine's query ended %s %s (cancelled %v), want USER_CANCELED", qi.State, qi.ErrorName, qi.Cancelled)
		}
		if got, _ := waitTask(t, c, tk.TaskID, 30*time.Second); got.Status != "cancelled" {
			t.Errorf("status after cancel: %q", got.Status)
		}
	})

	t.Run("2026-07-28 approval inside a task answered on another replica", func(t *testing.T) {
		for _, st := range []string{"CREATE SCHEMA sales.e2ereplask", "CREATE TABLE sales.e2ereplask.accepted (id INTEGER)", "CREATE TABLE sales.e2ereplask.declined (id INTEGER)"} {
			if err := trino.Exec(ctx, st); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales.e2ereplask CASCADE") })
		exists := func(table string) bool {
			d, err := trino.Dump(ctx, "sales", "e2ereplask")
			if err != nil {
				t.Fatal(err)
			}
			return strings.Contains(d, table)
		}
		for _, action := range []string{"accept", "decline"} {
			table := map[string]string{"accept": "accepted", "decline": "declined"}[action]
			c := elicitingExt(f.lbURL())
			id, created := extCreate(t, c, "DROP TABLE sales.e2ereplask."+table)
			// The replicas that did not create it: the answer must reach
			// the one running the task through Redis.
			var others []*e2e.HTTPServer
			for _, n := range f.names {
				if n != created.Replica {
					others = append(others, f.replica(n))
				}
			}
			tk := extWait(t, elicitingExt(others[0].MCPURL()), id, "input_required")
			if q := tk.InputRequests["approve-1"]; !strings.Contains(q.Params.Message, "sales.e2ereplask."+table) {
				t.Fatalf("input_required on another replica without the approval request: %+v", tk)
			}
			if !exists(table) {
				d, _ := trino.Dump(ctx, "sales", "e2ereplask")
				t.Fatalf("dropped before the answer: %s", d)
			}
			if a := call(t, elicitingExt(others[1].MCPURL()), "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approve-1": map[string]any{"action": action}}}); a.Error != nil {
				t.Fatalf("tasks/update on another replica: %s", a.Raw)
			}
			tk = extWait(t, elicitingExt(others[0].MCPURL()), id, "completed")
			if accepted := action == "accept"; tk.Result == nil || tk.Result.IsError == accepted || exists(table) == accepted {
				t.Fatalf("%s answered on another replica: result %s, table exists %v", action, tk.Raw, exists(table))
			}
			if done := extWait(t, elicitingExt(f.replica(created.Replica).MCPURL()), id, "completed"); string(done.Raw) != string(tk.Raw) {
				t.Errorf("the running replica's result %s differs from the store's %s", done.Raw, tk.Raw)
			}
		}
	})

	t.Run("2026-07-28 task of a killed replica reported failed", func(t *testing.T) {
		c := lb.NewModern(f.lbURL())
		q := slowQuery("replica_killed")
		tk, created := createTask(t, c, q)
		victim := f.replica(created.Replica)
		if st, _ := getTask(t, c, tk.TaskID); st.Status != "working" {
			t.Fatalf("task %q before the kill", st.Status)
		}
		killed := time.Now()
		victim.Cmd.Process.Signal(syscall.SIGKILL)
		<-victim.Done()
		got, _ := waitTask(t, c, tk.TaskID, 30*time.Second)
		took := time.Since(killed)
		t.Logf("figure: a killed replica's task reported failed after %s (heartbeat %s, bound 3 heartbeats = %s)", took.Round(time.Millisecond), replicaHeartbeat, 3*replicaHeartbeat)
		if got.Status != "failed" || !strings.Contains(got.StatusMessage, "the server running this task stopped") {
			t.Errorf("task after its replica died: %+v", got)
		}
		// The bound: 3 heartbeats since the last renewal, plus the
		// polls' and HAProxy's own latency on a loaded machine.
		if took > 3*replicaHeartbeat+10*time.Second {
			t.Errorf("reported failed after %s, want within 3 heartbeats (%s) plus slack", took, 3*replicaHeartbeat)
		}
		// The fleet again, for the next subtests.
		i := slices.Index(f.replicas, victim)
		f.replicas[i] = e2e.StartHTTP(f.t, f.bin, f.env) // lives as long as the fleet
		f.proxy.Stop()
		f.startProxy()
	})

	t.Run("confirmation code used once on every replica and after restarts", func(t *testing.T) {
		for _, s := range []string{"CREATE SCHEMA sales.e2erepl", "CREATE TABLE sales.e2erepl.orders (id INTEGER, status VARCHAR)",
			"INSERT INTO sales.e2erepl.orders VALUES (1, 'open'), (2, 'void'), (3, 'void')"} {
			if err := trino.Exec(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales.e2erepl CASCADE") })
		c := lb.NewModern(f.lbURL())
		q := "DELETE FROM sales.e2erepl.orders WHERE status = 'void'"
		code := confirmCode(t, c, q)
		used := confirmOn(t, f.replicas[0].MCPURL(), q, code)
		if bad, raw := isToolError(used); bad {
			t.Fatalf("first use on %s: %s", f.names[0], raw)
		}
		// Put the rows back: a replay would delete them again.
		if err := trino.Exec(ctx, "INSERT INTO sales.e2erepl.orders VALUES (2, 'void'), (3, 'void')"); err != nil {
			t.Fatal(err)
		}
		refusedEverywhere := func(when string) {
			t.Helper()
			for i, r := range f.replicas {
				a := confirmOn(t, r.MCPURL(), q, code)
				if bad, raw := isToolError(a); !bad || !strings.Contains(raw, "already been used") {
					t.Errorf("%s, %s: %s, want refused as already used", when, f.names[i], raw)
				}
			}
			if d, _ := trino.Dump(ctx, "sales", "e2erepl"); !strings.Contains(d, "void") {
				t.Fatalf("%s: the DELETE ran again", when)
			}
		}
		refusedEverywhere("on the other replicas")
		// The effect, counted on the engine: the DELETE ran once.
		ran := func() int {
			n := 0
			for _, qi := range trino.Queries() {
				if qi.SQL == q && qi.State == "FINISHED" {
					n++
				}
			}
			return n
		}
		if n := ran(); n != 1 {
			t.Errorf("the engine ran the DELETE %d times, want 1", n)
		}

		// A fresh code presented at once, 4 times to each replica: one
		// call runs it, the engine sees one more DELETE.
		code2 := confirmCode(t, c, q)
		var wg sync.WaitGroup
		var ok atomic.Int32
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := lb.NewModern(f.replicas[i%3].MCPURL()).Call(ctx, "tools/call",
					map[string]any{"name": "execute_query", "arguments": map[string]any{"query": q, "confirm": code2}})
				if bad, _ := isToolError(a); err == nil && !bad {
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 || ran() != 2 {
			t.Errorf("one code presented 12 times at once over 3 replicas: %d calls ran, the engine ran the DELETE %d times in all, want 1 and 2", ok.Load(), ran())
		}
		if err := trino.Exec(ctx, "INSERT INTO sales.e2erepl.orders VALUES (2, 'void'), (3, 'void')"); err != nil {
			t.Fatal(err)
		}
		for _, r := range f.replicas {
			r.Stop()
		}
		f.startReplicas()
		f.proxy.Stop()
		f.startProxy()
		refusedEverywhere("after every replica restarted")
		if n := ran(); n != 2 {
			t.Errorf("after the restarts the engine ran the DELETE %d times, want 2", n)
		}
	})

	t.Run("2025-11-25 session through the README configuration", func(t *testing.T) {
		c := &lb.Client{URL: f.lbURL(), HTTP: &http.Client{Timeout: 60 * time.Second}}
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		replicas := map[string]int{}
		for i := range 40 {
			a := call(t, c, "tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": fmt.Sprintf("SELECT %d AS n", i)}})
			if a.HTTP != http.StatusOK || a.Error != nil || !strings.Contains(a.Raw, fmt.Sprintf(`"rows":[[%d]]`, i)) {
				t.Fatalf("request %d of the session: HTTP %d %s", i, a.HTTP, a.Raw)
			}
			replicas[a.Replica]++
		}
		if len(replicas) != 1 {
			t.Errorf("the session's requests reached %v, want one replica", replicas)
		}
		// What the stick table prevents: the session's id on another
		// replica is not found there.
		var owner string
		for r := range replicas {
			owner = r
		}
		for _, n := range f.names {
			if n == owner {
				continue
			}
			direct := &lb.Client{URL: f.replica(n).MCPURL(), Session: c.Session, Version: c.Version, HTTP: c.HTTP}
			if a := call(t, direct, "tools/list", nil); a.HTTP != http.StatusNotFound {
				t.Errorf("the session on %s (not its replica): HTTP %d %s, want 404", n, a.HTTP, a.Raw)
			}
		}
		// Meanwhile 2026-07-28 requests are spread over every replica.
		spread := map[string]bool{}
		m := lb.NewModern(f.lbURL())
		for range 9 {
			spread[call(t, m, "tools/list", nil).Replica] = true
		}
		// Round robin reaches every live replica; a health check that
		// timed out on a loaded machine may take one out for a while.
		if len(spread) < 2 {
			t.Errorf("2026-07-28 requests reached %v, want them spread over the replicas (round robin)", spread)
		}
	})

	t.Run("Redis restarted with appendonly", func(t *testing.T) { redisRestart(t, f) })
}

// TestReplicasRedisRestartWithoutPersistence: the same fleet on a Redis
// without appendonly or snapshots.
func TestReplicasRedisRestartWithoutPersistence(t *testing.T) {
	redisRestart(t, startFleet(t, false))
}

// redisRestart: errors naming MCP_STATE_URL while Redis is down, recovery
// after, and nothing silently lost. With appendonly every task record and
// used code survives. Without persistence the store loses them and knows
// it (a new generation): the used code is refused on every replica, naming
// the reset, and runs nowhere; a task running across the restart finishes
// and is readable from another replica (its replica writes it again); a
// task that had ended before is "not found", saying the store began anew.
func redisRestart(t *testing.T, f *fleet) {
	ctx := t.Context()
	c := lb.NewModern(f.lbURL())
	tk, created := createTask(t, c, "SELECT 42 AS answer")
	if got, _ := waitTask(t, c, tk.TaskID, 60*time.Second); got.Status != "completed" {
		t.Fatalf("task ended %q", got.Status)
	}
	schema := fmt.Sprintf("e2eredis%v", f.redis.Persist)
	for _, s := range []string{"CREATE SCHEMA sales." + schema, "CREATE TABLE sales." + schema + ".t (id INTEGER)", "INSERT INTO sales." + schema + ".t VALUES (4242)"} {
		if err := trino.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales."+schema+" CASCADE") })
	rows := func() int {
		d, err := trino.Dump(ctx, "sales", schema)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(d, "4242")
	}
	q := "DELETE FROM sales." + schema + ".t WHERE id = 4242"
	code := confirmCode(t, c, q)
	if bad, raw := isToolError(confirmOn(t, f.lbURL(), q, code)); bad {
		t.Fatalf("first use: %s", raw)
	}
	trino.Exec(ctx, "INSERT INTO sales."+schema+".t VALUES (4242)")
	// A task running across the restart (its query outlasts it).
	slow := fmt.Sprintf("SELECT pause_ms(3000) AS across_restart_%v", f.redis.Persist)
	running, runOn := createTask(t, c, slow)
	engineState(t, slow, func(qi trinotest.QueryInfo) bool { return qi.State == "RUNNING" || qi.State == "QUEUED" }, 30*time.Second)

	f.redis.Stop()
	// While down: every call that needs the store fails naming
	// MCP_STATE_URL, on every replica.
	for i, r := range f.replicas {
		m := lb.NewModern(r.MCPURL())
		if _, a := getTask(t, m, tk.TaskID); !strings.Contains(a.Raw, "MCP_STATE_URL") {
			t.Errorf("Redis down, tasks/get on %s: %s", f.names[i], a.Raw)
		}
		if a := call(t, m, "tools/call", map[string]any{"name": "execute_query", "arguments": map[string]any{"query": "SELECT 1"}, "task": map[string]any{}}); !strings.Contains(a.Raw, "MCP_STATE_URL") {
			t.Errorf("Redis down, task creation on %s: %s", f.names[i], a.Raw)
		}
		a := confirmOn(t, r.MCPURL(), q, code)
		if bad, raw := isToolError(a); !bad || !strings.Contains(raw, "MCP_STATE_URL") {
			t.Errorf("Redis down, a used code on %s: %s, want refused naming MCP_STATE_URL", f.names[i], raw)
		}
		resp, err := http.Get(r.Base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("Redis down, /readyz on %s: HTTP %d", f.names[i], resp.StatusCode)
		}
	}
	if n := rows(); n != 1 {
		t.Fatalf("a code ran while Redis was down: %d rows, want 1", n)
	}

	f.redis.Restart()
	// Recovery: a new task works through the balancer (once each replica's
	// client redialled: until then the store "did not answer").
	for _, r := range f.replicas {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, a := getTask(t, lb.NewModern(r.MCPURL()), tk.TaskID)
			if !strings.Contains(a.Raw, "did not answer") || time.Now().After(deadline) {
				break
			}
		}
	}
	nt, _ := createTask(t, c, "SELECT 7 AS after")
	if got, _ := waitTask(t, c, nt.TaskID, 60*time.Second); got.Status != "completed" {
		t.Errorf("a task after Redis came back ended %q", got.Status)
	}
	// What survived. Asked on a replica other than the one that ran the
	// task (that one also holds it in memory).
	other := func(name string) *e2e.HTTPServer {
		for _, n := range f.names {
			if n != name {
				return f.replica(n)
			}
		}
		return nil
	}
	// A replica's first calls after the restart may still fail as the
	// store did not answer (go-redis keeps returning the outage's dial
	// error until its background redial succeeds): asked again.
	var old wireTask
	var a lb.Answer
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		old, a = getTask(t, lb.NewModern(other(created.Replica).MCPURL()), tk.TaskID)
		if !strings.Contains(a.Raw, "did not answer") || time.Now().After(deadline) {
			break
		}
	}
	// The used code, on every replica: refused, and the row stays.
	// (Refused too while the store did not answer: asked again.)
	var raw string
	for i, r := range f.replicas {
		var reused bool
		for deadline := time.Now().Add(30 * time.Second); ; {
			reused, raw = isToolError(confirmOn(t, r.MCPURL(), q, code))
			if !strings.Contains(raw, "did not answer") || time.Now().After(deadline) {
				break
			}
		}
		want := "already been used"
		if !f.redis.Persist {
			want = "lost its records at"
		}
		if !reused || !strings.Contains(raw, want) || !strings.Contains(raw, "MCP_STATE_URL") && !f.redis.Persist {
			t.Errorf("persist=%v: the used code on %s after the restart: %.300s, want refused (%q)", f.redis.Persist, f.names[i], raw, want)
		}
	}
	if n := rows(); n != 1 {
		t.Errorf("persist=%v: the used code ran again after the restart: %d rows, want 1", f.redis.Persist, n)
	}
	// The task that ran across the restart: finished, read elsewhere.
	// With appendonly its record outlived an outage longer than 3
	// heartbeats, so the first replica to read it reported it failed
	// (documented; as for a dead replica).
	m := lb.NewModern(other(runOn.Replica).MCPURL())
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, ga := getTask(t, m, running.TaskID)
		if got.Status == "completed" || f.redis.Persist && got.Status == "failed" && strings.Contains(ga.Raw, state.DeadMessage) {
			break
		}
		if got.Status != "" && got.Status != "working" || time.Now().After(deadline) {
			t.Fatalf("persist=%v: the task running across the restart, read on another replica: %s", f.redis.Persist, ga.Raw)
		}
		time.Sleep(50 * time.Millisecond) // polling is the protocol's own wait
	}
	if f.redis.Persist {
		if old.Status != "completed" {
			t.Errorf("appendonly: the task record did not survive: %s", a.Raw)
		}
	} else if a.Error == nil {
		// An ended task's record is lost (its replica still answers for
		// it from memory). The wording of "not found" after a reset is
		// shared/tasks' TestTasksAcrossRedisRestart's.
		t.Errorf("no persistence: a task ended before the restart is still in the store: %s", a.Raw)
	}
	// A code issued after the restart works once. One its replica issued
	// before it saw the store's new generation is refused: ask again.
	for deadline := time.Now().Add(30 * time.Second); ; {
		fresh := confirmCode(t, c, q)
		bad, raw := isToolError(confirmOn(t, f.lbURL(), q, fresh))
		if !bad {
			if again, raw := isToolError(confirmOn(t, f.replicas[0].MCPURL(), q, fresh)); !again || !strings.Contains(raw, "already been used") {
				t.Errorf("a code issued after the restart, used twice: %.300s", raw)
			}
			break
		}
		if !strings.Contains(raw, "lost its records at") || time.Now().After(deadline) {
			t.Fatalf("a code issued after the restart: %.300s", raw)
		}
	}
	if n := rows(); n != 0 {
		t.Errorf("a code issued after the restart: %d rows left, want 0", n)
	}
	t.Logf("Redis persist=%v: after the restart the old task answers %s; the used code answers %.200s", f.redis.Persist, a.Raw, raw)
}

// TestReplicaFigures measures create→result of a task through the
// balancer and directly, and the store's cost per task and per
// confirmation (a replica with MCP_STATE_URL against one without). It
// runs with SQLMCP_FIGURES=n (n tasks per series).
func TestReplicaFigures(t *testing.T) {
	n := 0
	fmt.Sscan(os.Getenv("SQLMCP_FIGURES"), &n)
	if n <= 0 {
		t.Skip("SQLMCP_FIGURES=n runs the figures (n tasks per series)")
	}
	f := startFleet(t, false)
	plain := e2e.StartHTTP(t, f.bin, engineEnv(t, "MCP_APPROVAL_SECRET="+replicaSecret, "SQLENGINE_ALLOW_WRITE_QUERIES=true", "LOG_LEVEL=warn"))
	// legacy: a 2025-11-25 session (tasks/result waits for the outcome);
	// modern: 2026-07-28, polling tasks/get, the result from tasks/result
	// of a replica other than the one running the task (the running one
	// does not give a 2026-07-28 client the result: see the report).
	series := func(name, url string, legacy bool) {
		c := lb.NewModern(url)
		if legacy {
			c = &lb.Client{URL: url, HTTP: &http.Client{Timeout: 60 * time.Second}}
			if _, err := c.Initialize(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		var d []time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			tk, _ := createTask(t, c, fmt.Sprintf("SELECT %d AS n", i))
			want := fmt.Sprintf(`"rows":[[%d]]`, i)
			var seen []string
			completed := legacy // legacy: tasks/result waits
			for tries := 0; ; tries++ {
				if !completed {
					if got, a := getTask(t, c, tk.TaskID); got.Status == "working" {
						continue
					} else if got.Status != "completed" {
						t.Fatalf("%s: %s", name, a.Raw)
					}
					completed = true
				}
				r := call(t, c, "tasks/result", map[string]any{"taskId": tk.TaskID})
				if strings.Contains(r.Raw, want) {
					break
				}
				seen = append(seen, r.Replica)
				if tries > 60 {
					t.Fatalf("%s: no result (tasks/result answered by %v): %s\nhaproxy:\n%s", name, seen, r.Raw, f.proxy.Log())
				}
				// Reached the running replica: the next request goes to the
				// next one (round robin).
			}
			d = append(d, time.Since(start))
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		t.Logf("figure: task create→result %s: median %s p99 %s (n=%d)", name, d[len(d)/2].Round(10*time.Microsecond), d[len(d)*99/100].Round(10*time.Microsecond), n)
	}
	series("2026-07-28 through HAProxy (3 replicas, Redis, round robin)", f.lbURL(), false)
	series("2025-11-25 through HAProxy (session pinned, Redis)", f.lbURL(), true)
	series("2025-11-25 direct to one replica (Redis)", f.replicas[0].MCPURL(), true)
	series("2025-11-25 direct, no store", plain.MCPURL(), true)
	ctx := t.Context()
	trino.Exec(ctx, "CREATE SCHEMA sales.e2efig")
	trino.Exec(ctx, "CREATE TABLE sales.e2efig.t (id INTEGER)")
	t.Cleanup(func() { trino.Exec(context.Background(), "DROP SCHEMA sales.e2efig CASCADE") })
	confirms := func(name, url string) {
		c := lb.NewModern(url)
		var d []time.Duration
		for i := 0; i < n; i++ {
			q := fmt.Sprintf("DELETE FROM sales.e2efig.t WHERE id = %d", i)
			code := confirmCode(t, c, q)
			start := time.Now()
			if bad, raw := isToolError(confirmOn(t, url, q, code)); bad {
				t.Fatalf("%s: %s", name, raw)
			}
			d = append(d, time.Since(start))
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		t.Logf("figure: confirmed call %s: median %s p99 %s (n=%d)", name, d[len(d)/2].Round(10*time.Microsecond), d[len(d)*99/100].Round(10*time.Microsecond), n)
	}
	confirms("with Redis", f.replicas[0].MCPURL())
	confirms("without store (ledger file)", plain.MCPURL())
}
