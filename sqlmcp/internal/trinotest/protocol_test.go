package trinotest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// wireResult is what a raw protocol exchange returned, page by page.
type wireResult struct {
	ID      string
	Columns []struct {
		Name          string          `json:"name"`
		Type          string          `json:"type"`
		TypeSignature json.RawMessage `json:"typeSignature"`
	}
	Data       [][]json.RawMessage
	Error      map[string]any
	States     []string
	UpdateType string
	Header     http.Header // headers of the last response
	Pages      int
	LastStats  wireStats // the stats of the last answer
}

// wireStats are the times and state of an answer's stats.
type wireStats struct {
	State             string `json:"state"`
	Queued            bool   `json:"queued"`
	QueuedTimeMillis  int64  `json:"queuedTimeMillis"`
	ElapsedTimeMillis int64  `json:"elapsedTimeMillis"`
	CPUTimeMillis     int64  `json:"cpuTimeMillis"`
}

// rawQuery speaks the protocol by hand (POST, then GET every nextUri) so
// tests can check the exact JSON a client receives.
func rawQuery(t *testing.T, srv *trinotest.Server, sqlText string, headers map[string]string) wireResult {
	t.Helper()
	client := srv.HTTPClient()
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/statement", strings.NewReader(sqlText))
	req.Header.Set("X-Trino-User", "raw")
	req.Header.Set("X-Trino-Catalog", trinotest.DefaultCatalog)
	req.Header.Set("X-Trino-Schema", trinotest.DefaultSchema)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	var res wireResult
	for {
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", req.Method, req.URL, resp.StatusCode, body)
		}
		var page struct {
			ID         string          `json:"id"`
			NextURI    string          `json:"nextUri"`
			Columns    json.RawMessage `json:"columns"`
			Data       [][]json.RawMessage
			Error      map[string]any `json:"error"`
			Stats      wireStats      `json:"stats"`
			UpdateType string         `json:"updateType"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		if page.ID == "" {
			t.Fatalf("page without id: %s", body)
		}
		res.ID = page.ID
		res.States = append(res.States, page.Stats.State)
		res.LastStats = page.Stats
		if page.Columns != nil && res.Columns == nil {
			if err := json.Unmarshal(page.Columns, &res.Columns); err != nil {
				t.Fatal(err)
			}
		}
		if len(page.Data) > 0 {
			res.Pages++
			res.Data = append(res.Data, page.Data...)
		}
		if page.Error != nil {
			res.Error = page.Error
		}
		if page.UpdateType != "" {
			res.UpdateType = page.UpdateType
		}
		res.Header = resp.Header
		if page.NextURI == "" {
			return res
		}
		req, _ = http.NewRequest(http.MethodGet, page.NextURI, nil)
		req.Header.Set("X-Trino-User", "raw")
	}
}

func TestWireTypesAndValues(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	res := rawQuery(t, srv, "SELECT * FROM all_types ORDER BY id", nil)
	if res.Error != nil {
		t.Fatalf("error: %v", res.Error)
	}
	wantTypes := map[string]string{
		"id": "integer", "c_boolean": "boolean", "c_tinyint": "tinyint", "c_smallint": "smallint",
		"c_integer": "integer", "c_bigint": "bigint", "c_real": "real", "c_double": "double",
		"c_decimal": "decimal(10,2)", "c_decimal_wide": "decimal(38,9)", "c_varchar": "varchar",
		"c_varbinary": "varbinary", "c_date": "date", "c_time": "time(6)", "c_timestamp": "timestamp(3)",
		"c_timestamp_us": "timestamp(6)", "c_timestamptz": "timestamp(6) with time zone", "c_uuid": "uuid",
		"c_json": "json", "c_array": "array(integer)", "c_array_varchar": "array(varchar)",
		"c_map": "map(varchar, integer)", "c_row": "row(name varchar, score double)",
	}
	got := map[string]string{}
	idx := map[string]int{}
	for i, c := range res.Columns {
		got[c.Name] = c.Type
		idx[c.Name] = i
	}
	if !reflect.DeepEqual(got, wantTypes) {
		t.Errorf("types:\n got %v\nwant %v", got, wantTypes)
	}
	wantRow1 := map[string]string{
		"c_boolean": `true`, "c_tinyint": `1`, "c_bigint": `4`, "c_real": `1.5`, "c_double": `2.25`,
		"c_decimal": `"12.30"`, "c_decimal_wide": `"12345678901234567890.123456789"`, "c_varchar": `"hello"`,
		"c_varbinary": `"3q2+7w=="`, "c_date": `"2024-01-02"`, "c_time": `"03:04:05.678000"`,
		"c_timestamp": `"2024-01-02 03:04:05.678"`, "c_timestamp_us": `"2024-01-02 03:04:05.678901"`,
		"c_timestamptz": `"2024-01-02 03:04:05.678000 UTC"`, "c_uuid": `"6ba7b810-9dad-11d1-80b4-00c04fd430c8"`,
		"c_json": `"{\"a\":[1,2]}"`, "c_array": `[1,2,3]`, "c_array_varchar": `["x",null,"z"]`,
		"c_map": `{"one":1,"two":2}`, "c_row": `["n",0.5]`,
	}
	for name, want := range wantRow1 {
		if g := string(res.Data[0][idx[name]]); g != want {
			t.Errorf("row 1 %s = %s, want %s", name, g, want)
		}
	}
	if g := string(res.Data[1][idx["c_decimal"]]); g != `"-0.01"` {
		t.Errorf("negative decimal = %s", g)
	}
	for name, i := range idx {
		if name != "id" && string(res.Data[2][i]) != "null" {
			t.Errorf("row 3 %s = %s, want null", name, res.Data[2][i])
		}
	}
	var sig map[string]any
	_ = json.Unmarshal(res.Columns[idx["c_decimal"]].TypeSignature, &sig)
	if sig["rawType"] != "decimal" || len(sig["arguments"].([]any)) != 2 {
		t.Errorf("decimal signature = %v", sig)
	}
	_ = json.Unmarshal(res.Columns[idx["c_row"]].TypeSignature, &sig)
	args := sig["arguments"].([]any)
	if sig["rawType"] != "row" || args[0].(map[string]any)["kind"] != "NAMED_TYPE" {
		t.Errorf("row signature = %v", sig)
	}
}

func TestWireStatesAndPaging(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithPageSize(7), trinotest.WithLargeTableRows(100))
	res := rawQuery(t, srv, "SELECT id FROM "+trinotest.LargeTable+" ORDER BY id", nil)
	if len(res.Data) != 100 || res.Pages != 15 {
		t.Fatalf("rows %d pages %d, want 100 rows in 15 pages", len(res.Data), res.Pages)
	}
	if res.States[0] != trinotest.StateQueued || res.States[len(res.States)-1] != trinotest.StateFinished {
		t.Errorf("states = %v", res.States)
	}
	if string(res.Data[99][0]) != "100" {
		t.Errorf("last id = %s", res.Data[99][0])
	}
}

func TestWireUnaliasedColumnsAndUse(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	res := rawQuery(t, srv, "SELECT 1, id, count(*) AS n, upper(name) FROM customers GROUP BY id, name", nil)
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if want := []string{"_col0", "id", "n", "_col3"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	res = rawQuery(t, srv, "USE warehouse.inventory", nil)
	if res.UpdateType != "USE" || res.Header.Get("X-Trino-Set-Catalog") != "warehouse" || res.Header.Get("X-Trino-Set-Schema") != "inventory" {
		t.Errorf("USE: updateType %q headers %v", res.UpdateType, res.Header)
	}
}

func TestInfoAndUnknownPaths(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithoutSampleData())
	resp, err := http.Get(srv.URL() + "/v1/info")
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&info)
	_ = resp.Body.Close()
	if info["starting"] != false || info["coordinator"] != true {
		t.Errorf("info = %v", info)
	}
	resp, err = http.Get(srv.URL() + "/v1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	srv.SetUnavailable(true)
	resp, err = http.Get(srv.URL() + "/v1/info")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("unavailable: %d", resp.StatusCode)
	}
}

func TestAbandonedQueryIsCancelled(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithAbandonAfter(200*time.Millisecond), trinotest.WithPageSize(100), trinotest.WithLargeTableRows(100_000))
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/statement", strings.NewReader("SELECT * FROM "+trinotest.LargeTable))
	req.Header.Set("X-Trino-User", "gone")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&page)
	_ = resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := srv.WaitQuery(ctx, page.ID)
	if err != nil {
		t.Fatalf("query still running: %+v", info)
	}
	if info.ErrorName != "ABANDONED_QUERY" || info.State != trinotest.StateFailed || info.RowsRead >= 100_000 {
		t.Errorf("info = %+v", info)
	}
}

func TestWireSessionStatements(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	res := rawQuery(t, srv, "SET SESSION query_max_run_time = '10m'", nil)
	if res.UpdateType != "SET SESSION" || res.Header.Get("X-Trino-Set-Session") != "query_max_run_time=10m" {
		t.Errorf("SET SESSION: %q %v", res.UpdateType, res.Header)
	}
	res = rawQuery(t, srv, "RESET SESSION query_max_run_time", nil)
	if res.UpdateType != "RESET SESSION" || res.Header.Get("X-Trino-Clear-Session") != "query_max_run_time" {
		t.Errorf("RESET SESSION: %q %v", res.UpdateType, res.Header)
	}
	res = rawQuery(t, srv, "SHOW SCHEMAS FROM system", nil)
	if len(res.Data) != 4 || string(res.Data[0][0]) != `"information_schema"` {
		t.Errorf("system schemas = %v", res.Data)
	}
	res = rawQuery(t, srv, "SELECT * FROM information_schema.tables", map[string]string{"X-Trino-Catalog": "", "X-Trino-Schema": ""})
	if res.Error == nil || res.Error["errorName"] != "MISSING_CATALOG_NAME" {
		t.Errorf("information_schema without catalog: %v", res.Error)
	}
	res = rawQuery(t, srv, "SHOW SCHEMAS", map[string]string{"X-Trino-Catalog": "", "X-Trino-Schema": ""})
	if res.Error == nil || res.Error["errorName"] != "MISSING_CATALOG_NAME" {
		t.Errorf("SHOW SCHEMAS without catalog: %v", res.Error)
	}
	// EXPLAIN ANALYZE executes the statement, as in Trino.
	res = rawQuery(t, srv, "EXPLAIN ANALYZE INSERT INTO sales.crm.contacts VALUES (9, 'x', NULL, NULL)", nil)
	if res.Error != nil || len(res.Columns) != 1 || res.Columns[0].Name != "Query Plan" {
		t.Fatalf("EXPLAIN ANALYZE: %v %v", res.Error, res.Columns)
	}
	res = rawQuery(t, srv, "SELECT count(*) FROM sales.crm.contacts", nil)
	if string(res.Data[0][0]) != "4" {
		t.Errorf("EXPLAIN ANALYZE did not execute the insert: %s", res.Data[0][0])
	}
}

func TestWireShowCreateView(t *testing.T) {
	t.Parallel()
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1))
	res := rawQuery(t, srv, "SHOW CREATE VIEW order_totals", nil)
	if res.Error != nil || len(res.Data) != 1 || res.Columns[0].Name != "Create View" {
		t.Fatalf("%v %v", res.Error, res.Data)
	}
	var text string
	_ = json.Unmarshal(res.Data[0][0], &text)
	if !strings.HasPrefix(text, "CREATE VIEW sales.public.order_totals SECURITY DEFINER AS\n") || !strings.Contains(text, "sales.public.orders") {
		t.Errorf("view text = %q", text)
	}
	res = rawQuery(t, srv, "SHOW CREATE TABLE order_totals", nil)
	if res.Error == nil || res.Error["errorName"] != "TABLE_NOT_FOUND" {
		t.Errorf("SHOW CREATE TABLE of a view: %v", res.Error)
	}
}

// With a queue time, a query answers QUEUED (queued: true) until it runs;
// its last answer reports the queue time, the runner's busy time as CPU
// (pause_ms keeps it busy) and an elapsed time that covers both, and
// QueryInfo.Stats is what that answer said.
func TestQueueTimeAndStats(t *testing.T) {
	srv := trinotest.Start(t, trinotest.WithQueueTime(200*time.Millisecond), trinotest.WithMaxWait(50*time.Millisecond), trinotest.WithLargeTableRows(-1))
	res := rawQuery(t, srv, "SELECT pause_ms(100) AS p", nil)
	queued := 0
	for _, s := range res.States {
		if s == trinotest.StateQueued {
			queued++
		}
	}
	st := res.LastStats
	if queued < 2 || res.States[len(res.States)-1] != trinotest.StateFinished {
		t.Errorf("states %v: want QUEUED for the submit and while queued, FINISHED last", res.States)
	}
	if st.Queued || st.QueuedTimeMillis < 200 || st.CPUTimeMillis < 100 || st.ElapsedTimeMillis < st.QueuedTimeMillis+st.CPUTimeMillis {
		t.Errorf("last stats %+v: want queued >= 200ms, CPU >= 100ms, elapsed >= both", st)
	}
	qi, ok := srv.Query(res.ID)
	if !ok {
		t.Fatalf("no query %s", res.ID)
	}
	want := trinotest.Stats{State: st.State, QueuedMillis: st.QueuedTimeMillis, ElapsedMillis: st.ElapsedTimeMillis, CPUMillis: st.CPUTimeMillis}
	if qi.Stats != want {
		t.Errorf("QueryInfo.Stats %+v, want the last answer's %+v", qi.Stats, want)
	}
}
