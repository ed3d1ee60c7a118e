package toolcall_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/audit"
	"github.com/mcpfleet/mcpfleet/shared/toolcall"
	"github.com/mcpfleet/mcpfleet/shared/toolcall/toolcalltest"
)

// The declarations below are real tools of the four servers, declared as
// typed input structs. testdata/golden_tools.json holds their entries copied
// from each module's tools/list golden file (output schemas left out: they
// are not derived here). TestTypedDeclarationsMatchGoldens proves that
// each struct, its Effect and its Schema adjustment give clients the same
// tool by JSON meaning: title, annotations, description (with the class
// note a change tool gets) and every property's type, enum, pattern,
// bounds, default and required-ness.

const namePattern = `^[A-Za-z0-9_.:-]{1,128}$`

// --- proxymcp ---

// weight is proxymcp's weight argument: 0-256 as a number, or a string
// holding a number or a percentage of the initial weight.
type weight string

func (weight) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "integer", Minimum: jsonschema.Ptr(0.0), Maximum: jsonschema.Ptr(256.0)},
		{Type: "string", Pattern: `^([0-9]{1,5}%|[0-9]{1,3})$`},
	}}
}

func (w *weight) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*w = weight(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*w = weight(s)
	return nil
}

type setServerWeightIn struct {
	Backend string `json:"backend" jsonschema:"Backend name." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Server  string `json:"server" jsonschema:"Server name inside the backend (see list_servers)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Weight  weight `json:"weight" jsonschema:"Weight 0-256 (number or string), or a percentage of the initial weight such as \"50%\"."`
}

type showStatIn struct {
	Filter string   `json:"filter,omitempty" jsonschema:"Empty for everything; else a proxy name, server name or type to match." maxLength:"128"`
	Proxy  string   `json:"proxy,omitempty" jsonschema:"Only rows of this frontend/backend." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Type   string   `json:"type,omitempty" jsonschema:"Object type: frontend, backend, server or listener." enum:"frontend,backend,server,listener"`
	Server string   `json:"server,omitempty" jsonschema:"Only rows whose server name (svname) is this." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Fields []string `json:"fields,omitempty" jsonschema:"CSV column names to return, in this order (e.g. [\"pxname\",\"svname\",\"status\",\"scur\"]); [\"all\"] for every column. Default: pxname, svname, status, weight, act, bck, addr, scur, smax, slim, qcur, rate, stot, bin, bout, ereq, econ, eresp, hrsp_5xx, check_status, check_code, chkdown, lastchg, downtime, rtime, agent_status." pattern:"^[a-z0-9_]{1,64}$" maxItems:"256"`
}

type tableFilter struct {
	Data  string `json:"data" jsonschema:"Stored data type, e.g. conn_cur, gpc0, http_req_rate." pattern:"^[a-z][a-z0-9_]{0,63}$"`
	Op    string `json:"op" enum:"eq,ne,lt,le,gt,ge"`
	Value int64  `json:"value"`
}

type showTableIn struct {
	Table   string        `json:"table" jsonschema:"Table name (see list_tables)." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Key     string        `json:"key,omitempty" jsonschema:"Only the entry with this key." maxLength:"4096"`
	Filters []tableFilter `json:"filters,omitempty" jsonschema:"Conditions on stored data." maxItems:"4"`
}

type mapEntry struct {
	Key   string `json:"key" minLength:"1"`
	Value string `json:"value" minLength:"1"`
}

type replaceMapIn struct {
	Map     string     `json:"map" jsonschema:"The map: its file path exactly as list_maps reports it, or #<id>." pattern:"^(#[0-9]+|[A-Za-z0-9/._-]+)$"`
	Entries []mapEntry `json:"entries" jsonschema:"The new content: [{\"key\":...,\"value\":...}]. An empty array empties the map." maxItems:"10000"`
}

type addServerIn struct {
	Backend string  `json:"backend" jsonschema:"Backend to add the server to." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Server  string  `json:"server" jsonschema:"Name of the new server." pattern:"^[A-Za-z0-9_.:-]{1,128}$"`
	Address string  `json:"address" jsonschema:"IPv4 or IPv6 address."`
	Port    int     `json:"port" jsonschema:"TCP port." minimum:"1" maximum:"65535"`
	Weight  *weight `json:"weight,omitempty" jsonschema:"Weight 0-256 (number or string), or a percentage of the initial weight such as \"50%\"."`
	Maxconn *int    `json:"maxconn,omitempty" jsonschema:"Maximum concurrent connections (0: unlimited)." minimum:"0" maximum:"1000000"`
	Check   bool    `json:"check,omitempty" jsonschema:"Health-check the server with the backend's check settings."`
	Backup  bool    `json:"backup,omitempty" jsonschema:"Make it a backup server."`
	Enable  bool    `json:"enable,omitempty" jsonschema:"Put the server in service after adding it (default false: it stays in maintenance)."`
}

// --- sqlmcp ---

type executeQueryIn struct {
	Query   string `json:"query" jsonschema:"one Trino SQL statement (a single trailing ';' is allowed)" minLength:"1"`
	Limit   int    `json:"limit,omitempty" minimum:"1"` // maximum and description: the configured ceiling (Schema)
	Catalog string `json:"catalog,omitempty" jsonschema:"catalog for unqualified names in this query (default: the configured catalog)"`
	Schema  string `json:"schema,omitempty" jsonschema:"schema for unqualified names in this query (default: the configured schema)"`
}

type explainQueryIn struct {
	Query  string `json:"query" jsonschema:"the statement to plan; nothing is executed" minLength:"1"`
	Type   string `json:"type,omitempty" jsonschema:"plan type (default LOGICAL)" enum:"LOGICAL,DISTRIBUTED,VALIDATE,IO"`
	Format string `json:"format,omitempty" jsonschema:"plan format (default TEXT)" enum:"TEXT,JSON,GRAPHVIZ"`
}

type tableSchemaIn struct {
	Table   string `json:"table" jsonschema:"the table: one name as it is when catalog or schema is given; otherwise table, schema.table or catalog.schema.table, with parts containing dots or quotes in double quotes (\"my.table\")" minLength:"1"`
	Catalog string `json:"catalog,omitempty" jsonschema:"catalog when the table name does not give one (default: the configured catalog); when catalog or schema is given, table is taken as one name"`
	Schema  string `json:"schema,omitempty" jsonschema:"schema when the table name does not give one (default: the configured schema); when catalog or schema is given, table is taken as one name"`
}

// --- streammcp ---

// clusterArg is the optional cluster argument every streammcp tool takes;
// its enum and description name the configured clusters (Schema).
type clusterArg struct {
	Cluster string `json:"cluster,omitempty"`
}

type consumeIn struct {
	clusterArg
	Topic       string `json:"topic" jsonschema:"topic name"`
	Partition   *int32 `json:"partition,omitempty" jsonschema:"partition number (default 0)" minimum:"0"`
	Offset      *int64 `json:"offset,omitempty" jsonschema:"first offset to read; omit to read the last messages" minimum:"0"`
	Last        int    `json:"last,omitempty" jsonschema:"read the last N messages (default 10); not with offset" minimum:"1" maximum:"100"`
	MaxMessages int    `json:"max_messages,omitempty" jsonschema:"at most this many messages (default 10, max 100)" minimum:"1" maximum:"100"`
	MaxBytes    int    `json:"max_bytes,omitempty" jsonschema:"at most this many key+value bytes (default 65536, max 1048576)" minimum:"1" maximum:"1048576"`
}

type createTopicIn struct {
	clusterArg
	Name              string            `json:"name" jsonschema:"topic name"`
	Partitions        int32             `json:"partitions,omitempty" jsonschema:"number of partitions (default 1)" minimum:"1"`
	ReplicationFactor int16             `json:"replication_factor,omitempty" jsonschema:"replicas per partition (default: the broker's default.replication.factor)" minimum:"1"`
	Configs           map[string]string `json:"configs,omitempty" jsonschema:"topic configs, e.g. {\"retention.ms\": \"86400000\"}"`
}

type produceIn struct {
	clusterArg
	Topic     string            `json:"topic" jsonschema:"topic name"`
	Value     string            `json:"value" jsonschema:"message value (UTF-8)"`
	Key       *string           `json:"key,omitempty" jsonschema:"message key; omit for a null key"`
	Partition *int32            `json:"partition,omitempty" jsonschema:"partition to write to; omit to let the key choose" minimum:"0"`
	Headers   map[string]string `json:"headers,omitempty" jsonschema:"message headers, name to string value"`
}

type describeConfigsIn struct {
	clusterArg
	ResourceType string `json:"resource_type" jsonschema:"topic or broker" enum:"topic,broker"`
	ResourceName string `json:"resource_name" jsonschema:"topic name, or broker id (e.g. \"1\")"`
}

// clusters is what streammcp's Schema adjustment does with its configured
// clusters (the golden's: one, named default).
func clusters(names ...string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		p := s.Properties["cluster"]
		p.Description = fmt.Sprintf("Kafka cluster to use, as named in STREAM_CLUSTERS; omit for the default cluster (%s)", names[0])
		for _, n := range names {
			p.Enum = append(p.Enum, n)
		}
	}
}

// --- codermcp ---

type coderIn struct {
	Prompt           string `json:"prompt" jsonschema:"the task or question for the coding assistant"`
	SessionID        string `json:"sessionId,omitempty" jsonschema:"session to continue (1-256 of A-Z a-z 0-9 _ -); absent or unknown: a new session"`
	ResetSession     bool   `json:"resetSession,omitempty" jsonschema:"clear the session's history and CLI conversation before this prompt" default:"false"`
	Model            string `json:"model,omitempty"` // default and description: the configured models (Schema)
	ReasoningEffort  string `json:"reasoningEffort,omitempty" jsonschema:"how hard the model reasons" enum:"low,medium,high"`
	Sandbox          string `json:"sandbox,omitempty" jsonschema:"what commands run by the assistant may touch (default read-only)" enum:"read-only,workspace-write,danger-full-access"`
	FullAuto         bool   `json:"fullAuto,omitempty" jsonschema:"sandboxed automatic execution (the workspace-write sandbox)" default:"false"`
	WorkingDirectory string `json:"workingDirectory,omitempty" jsonschema:"directory the CLI works in (must exist)"`
	CallbackURI      string `json:"callbackUri,omitempty" jsonschema:"URI passed to the CLI's environment as CODER_MCP_CALLBACK_URI / CODEX_MCP_CALLBACK_URI"`
}

type reviewIn struct {
	Prompt           string `json:"prompt,omitempty" jsonschema:"custom review instructions (a target on its own)"`
	Uncommitted      bool   `json:"uncommitted,omitempty" jsonschema:"review staged, unstaged and untracked changes"`
	Base             string `json:"base,omitempty" jsonschema:"review the changes against this base branch"`
	Commit           string `json:"commit,omitempty" jsonschema:"review the changes introduced by this commit"`
	Title            string `json:"title,omitempty" jsonschema:"title shown in the review summary (with commit)"`
	Model            string `json:"model,omitempty"`
	WorkingDirectory string `json:"workingDirectory,omitempty" jsonschema:"repository directory to review (must exist)"`
}

type pingIn struct {
	Message string `json:"message,omitempty" jsonschema:"text to echo back" default:"pong"`
}

// models is codermcp's Schema adjustment of a model argument: the
// configured default and list.
func models(s *jsonschema.Schema) {
	p := s.Properties["model"]
	p.Default = json.RawMessage(`"llm-5.2-coder"`)
	p.Description = "model id, one of: llm-5.2-coder, llm-5.1-coder, llm-5.1-coder-max, llm-5-coder, llm-4o, llm-4"
}

// goldenTools is testdata/golden_tools.json: per server, the tools copied
// from its golden file.
type goldenTools map[string]struct {
	From  string            `json:"from"`
	Tools []json.RawMessage `json:"tools"`
}

func loadGoldens(t *testing.T) goldenTools {
	t.Helper()
	b, err := os.ReadFile("testdata/golden_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenTools
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// described returns a golden tool's description without the class note
// the pipeline appends, i.e. what the server declares.
func (g goldenTools) described(t *testing.T, srv, name string) string {
	for _, raw := range g[srv].Tools {
		var tl struct{ Name, Description string }
		if err := json.Unmarshal(raw, &tl); err != nil {
			t.Fatal(err)
		}
		if tl.Name == name {
			d, _, _ := strings.Cut(tl.Description, "\n\nRisk class: ")
			return d
		}
	}
	t.Fatalf("no golden tool %s/%s", srv, name)
	return ""
}

func newPipeline(t testing.TB) (*toolcall.Pipeline, *server.MCPServer) {
	t.Helper()
	srv := server.NewMCPServer("t", "v", server.WithHooks(&server.Hooks{}))
	p, err := toolcall.New(srv, toolcall.Config{Audit: audit.Config{Dest: "off"}}, toolcall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, srv
}

func noRead[T any](context.Context, T) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("ok"), nil
}

func noPlan[T any](context.Context, T) (toolcall.Plan, error) {
	return toolcall.Plan{}, fmt.Errorf("not planned in this test")
}

func TestTypedDeclarationsMatchGoldens(t *testing.T) {
	g := loadGoldens(t)
	reads := func(title string, open bool) toolcall.Effect {
		return toolcall.Effect{Title: title, Most: toolcall.Read, Idempotent: true, OpenWorld: open}
	}
	const ceiling = 10000
	register := map[string]func(p *toolcall.Pipeline){
		"proxymcp": func(p *toolcall.Pipeline) {
			d := func(name string) string { return g.described(t, "proxymcp", name) }
			toolcall.AddChange(p, toolcall.Tool{Name: "set_server_weight", Description: d("set_server_weight"),
				Effect: toolcall.Effect{Title: "Set server weight", Most: toolcall.Change, Idempotent: true}}, noPlan[setServerWeightIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "show_stat", Description: d("show_stat"), Effect: reads("Statistics", false)}, noRead[showStatIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "show_table", Description: d("show_table"), Effect: reads("Show a stick table", false)}, noRead[showTableIn])
			toolcall.AddChange(p, toolcall.Tool{Name: "replace_map", Description: d("replace_map"),
				Effect: toolcall.Effect{Title: "Replace a map", Most: toolcall.Destructive}}, noPlan[replaceMapIn])
			toolcall.AddChange(p, toolcall.Tool{Name: "add_server", Description: d("add_server"),
				Effect: toolcall.Effect{Title: "Add a server", Most: toolcall.Change}}, noPlan[addServerIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "help", Description: d("help"), Effect: reads("Runtime API commands", false)}, noRead[struct{}])
		},
		"sqlmcp": func(p *toolcall.Pipeline) {
			d := func(name string) string { return g.described(t, "sqlmcp", name) }
			toolcall.AddChange(p, toolcall.Tool{Name: "execute_query", Description: d("execute_query"),
				Effect: toolcall.Effect{Title: "Run SQL", Most: toolcall.Destructive},
				Schema: func(s *jsonschema.Schema) {
					s.Properties["limit"].Maximum = jsonschema.Ptr(float64(ceiling))
					s.Properties["limit"].Description = fmt.Sprintf("most rows to return (default %d, at most %d, the operator's SQLENGINE_MAX_ROWS_CEILING)", 1000, ceiling)
				}}, noPlan[executeQueryIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "explain_query", Description: d("explain_query"), Effect: reads("Explain SQL", false)}, noRead[explainQueryIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "list_catalogs", Description: d("list_catalogs"), Effect: reads("List catalogs", false)}, noRead[struct{}])
			toolcall.AddRead(p, toolcall.Tool{Name: "get_table_schema", Description: d("get_table_schema"), Effect: reads("Describe table", false)}, noRead[tableSchemaIn])
		},
		"streammcp": func(p *toolcall.Pipeline) {
			d := func(name string) string { return g.described(t, "streammcp", name) }
			cl := clusters("default")
			write := func(title string) toolcall.Effect {
				return toolcall.Effect{Title: title, Most: toolcall.Change, Destructive: true, OpenWorld: true}
			}
			toolcall.AddRead(p, toolcall.Tool{Name: "consume_messages", Description: d("consume_messages"), Effect: reads("Peek at messages", true), Schema: cl}, noRead[consumeIn])
			toolcall.AddChange(p, toolcall.Tool{Name: "create_topic", Description: d("create_topic"), Effect: write("Create topic"), Schema: cl}, noPlan[createTopicIn])
			toolcall.AddChange(p, toolcall.Tool{Name: "produce_message", Description: d("produce_message"), Effect: write("Produce message"), Schema: cl}, noPlan[produceIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "describe_configs", Description: d("describe_configs"), Effect: reads("Describe configs", true), Schema: cl}, noRead[describeConfigsIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "list_topics", Description: d("list_topics"), Effect: reads("List topics", true), Schema: cl}, noRead[clusterArg])
		},
		"codermcp": func(p *toolcall.Pipeline) {
			d := func(name string) string { return g.described(t, "codermcp", name) }
			titled := func(e toolcall.Effect) toolcall.Effect { e.TitleAnnotation = true; return e }
			toolcall.AddChange(p, toolcall.Tool{Name: "coder", Description: d("coder"),
				Effect: titled(toolcall.Effect{Title: "Execute CLI", Most: toolcall.Destructive, OpenWorld: true}), Schema: models}, noPlan[coderIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "ping", Description: d("ping"), Effect: titled(reads("Ping Server", false))}, noRead[pingIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "review", Description: d("review"), Effect: titled(reads("Code Review", true)), Schema: models}, noRead[reviewIn])
			toolcall.AddRead(p, toolcall.Tool{Name: "help", Description: d("help"), Effect: titled(reads("Get Help", false))}, noRead[struct{}])
		},
	}
	for srv, reg := range register {
		t.Run(srv, func(t *testing.T) {
			p, _ := newPipeline(t)
			reg(p)
			var got []mcp.Tool
			for _, raw := range g[srv].Tools {
				var tl struct{ Name string }
				_ = json.Unmarshal(raw, &tl)
				tool, ok := p.Tool(tl.Name)
				if !ok {
					t.Fatalf("%s not registered", tl.Name)
				}
				got = append(got, tool)
			}
			if len(g[srv].Tools) < 3 {
				t.Fatalf("only %d %s tools compared", len(g[srv].Tools), srv)
			}
			gotJSON, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(g[srv].Tools)
			for _, d := range toolcalltest.ToolsDiff(wantJSON, gotJSON) {
				t.Errorf("%s (golden %s): %s", srv, g[srv].From, d)
			}
		})
	}
}

// The comparison is not vacuous: one keyword changed in a declaration is a
// difference.
func TestGoldenComparisonSeesAChangedKeyword(t *testing.T) {
	g := loadGoldens(t)
	p, _ := newPipeline(t)
	toolcall.AddRead(p, toolcall.Tool{Name: "explain_query", Description: g.described(t, "sqlmcp", "explain_query"),
		Effect: toolcall.Effect{Title: "Explain SQL", Most: toolcall.Read, Idempotent: true},
		Schema: func(s *jsonschema.Schema) { s.Properties["type"].Enum = s.Properties["type"].Enum[:3] }}, noRead[explainQueryIn])
	tool, _ := p.Tool("explain_query")
	got, _ := json.Marshal([]mcp.Tool{tool})
	var want []json.RawMessage
	for _, raw := range g["sqlmcp"].Tools {
		if bytes.Contains(raw, []byte(`"name": "explain_query"`)) || bytes.Contains(raw, []byte(`"name":"explain_query"`)) {
			want = append(want, raw)
		}
	}
	wantJSON, _ := json.Marshal(want)
	diffs := toolcalltest.ToolsDiff(wantJSON, got)
	if len(diffs) != 1 || !strings.Contains(diffs[0], "inputSchema.properties.type.enum") {
		t.Fatalf("diffs %q", diffs)
	}
}
