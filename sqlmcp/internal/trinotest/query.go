package trinotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Query states, as in Trino's stats.state.
const (
	StateQueued   = "QUEUED"
	StateRunning  = "RUNNING"
	StateFinished = "FINISHED"
	StateFailed   = "FAILED"
)

// QueryInfo is what the engine recorded about one query.
type QueryInfo struct {
	ID  string
	SQL string
	// User is X-Trino-User of the POST; Principal is the authenticated
	// user (equal to User without password authentication).
	User       string
	Principal  string
	Source     string
	Catalog    string
	Schema     string
	ClientTags []string
	ClientInfo string
	// Session holds the X-Trino-Session properties of the POST.
	Session map[string]string
	// State is QUEUED, RUNNING, FINISHED or FAILED (a cancelled query is
	// FAILED with ErrorName USER_CANCELED, as in Trino).
	State string
	// Cancelled is true once the query received a DELETE.
	Cancelled bool
	// Interrupted is true when the cancel stopped the DuckDB side before it
	// had produced every row: execution was interrupted or rows were left
	// unread.
	Interrupted bool
	// RowsRead is the number of rows read from DuckDB; RowsSent the number
	// served to the client in pages; Pages the number of data pages served.
	RowsRead  int64
	RowsSent  int64
	Pages     int
	ErrorName string
	Error     string
	Created   time.Time
	Ended     time.Time
	// Stats are the stats of the last answer served for the query: what
	// the client was last told.
	Stats Stats
}

// Stats are the times a query's answers report in their stats object.
// Queued is the time from the submit until the statement started to run
// (Options.QueueTime and the runner's start), Elapsed the time from the
// submit to the end of the query (or to the answer), CPU the time the
// statement's runner was busy — DuckDB's run time, not its threads' CPU
// time, which the test engine cannot measure per query — excluding the
// time it waited for the client to take a page.
type Stats struct {
	State                       string
	QueuedMillis, ElapsedMillis int64
	CPUMillis                   int64
}

// event is what the statement runner hands to the page server: a page of
// rows, the end of the result, or an error.
type event struct {
	columns     []columnJSON
	rows        [][]any
	done        bool
	err         *trinoError
	updateType  string
	updateCount *int64
	headers     http.Header
}

type query struct {
	id     string
	sql    string
	ctx    context.Context
	cancel context.CancelFunc
	events chan event
	done   chan struct{} // closed when the runner has returned

	serveMu sync.Mutex // one page request at a time
	token   int64      // last token served
	last    []byte     // body of the last page, for a repeated request
	lastHdr http.Header
	columns []columnJSON
	ended   bool

	timeLimit time.Duration // query_max_run_time, when set
	started   atomic.Int64  // unix nanos the statement started to run; 0 while queued
	finished  atomic.Int64  // unix nanos the runner returned
	sendWait  atomic.Int64  // nanos the runner waited for the client to take a page
	cancelled atomic.Bool
	rowsRead  atomic.Int64
	lastSeen  atomic.Int64 // unix nanos of the last client request

	mu   sync.Mutex
	info QueryInfo
}

func (q *query) snapshot() QueryInfo {
	q.mu.Lock()
	defer q.mu.Unlock()
	info := q.info
	info.Cancelled = q.cancelled.Load()
	info.RowsRead = q.rowsRead.Load()
	info.ClientTags = append([]string(nil), q.info.ClientTags...)
	return info
}

func (q *query) setState(state string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.info.State == StateFinished || q.info.State == StateFailed {
		return
	}
	q.info.State = state
	if state == StateFinished || state == StateFailed {
		q.info.Ended = time.Now()
	}
}

func (q *query) fail(e *trinoError) {
	q.mu.Lock()
	if q.info.ErrorName == "" {
		q.info.ErrorName, q.info.Error = e.ErrorName, e.Message
	}
	q.mu.Unlock()
	q.setState(StateFailed)
}

// userCancel handles DELETE: it marks the query and cancels its context,
// which interrupts DuckDB and stops the runner.
func (q *query) userCancel() {
	q.cancelled.Store(true)
	select {
	case <-q.done:
	default:
		q.mu.Lock()
		q.info.Interrupted = true
		q.mu.Unlock()
	}
	q.cancel()
}

func (q *query) touch() { q.lastSeen.Store(time.Now().UnixNano()) }

// idleSince reports a running query whose client has not asked for a page
// for d.
func (q *query) idleSince(d time.Duration) bool {
	select {
	case <-q.done:
		return false
	default:
	}
	return time.Since(time.Unix(0, q.lastSeen.Load())) > d
}

// abandon cancels a query whose client went away.
func (q *query) abandon() {
	q.fail(newError("ABANDONED_QUERY", "Query was abandoned by the client", 0, 0))
	q.mu.Lock()
	q.info.Interrupted = true
	q.mu.Unlock()
	q.cancel()
}

// session is what a POST /v1/statement tells the engine about the query.
type session struct {
	user, principal, source string
	catalog, schema         string
	clientTags              []string
	clientInfo              string
	properties              map[string]string
	transactionID           string
	prepared                map[string]string
	timeZone                string
}

func sessionFrom(r *http.Request, principal string) session {
	h := r.Header
	s := session{
		user:          h.Get("X-Trino-User"),
		principal:     principal,
		source:        h.Get("X-Trino-Source"),
		catalog:       h.Get("X-Trino-Catalog"),
		schema:        h.Get("X-Trino-Schema"),
		clientInfo:    h.Get("X-Trino-Client-Info"),
		transactionID: h.Get("X-Trino-Transaction-Id"),
		timeZone:      h.Get("X-Trino-Time-Zone"),
		properties:    map[string]string{},
		prepared:      map[string]string{},
	}
	if s.principal == "" {
		s.principal = s.user
	}
	for _, v := range h.Values("X-Trino-Client-Tags") {
		for _, tag := range strings.Split(v, ",") {
			if tag = strings.TrimSpace(tag); tag != "" {
				s.clientTags = append(s.clientTags, tag)
			}
		}
	}
	for _, v := range h.Values("X-Trino-Session") {
		for _, kv := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
			if k != "" {
				s.properties[k], _ = url.QueryUnescape(val)
			}
		}
	}
	for _, v := range h.Values("X-Trino-Prepared-Statement") {
		for _, kv := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
			if k != "" {
				s.prepared[k], _ = url.QueryUnescape(val)
			}
		}
	}
	return s
}

// queryResults is the JSON body of every statement response.
type queryResults struct {
	ID          string         `json:"id"`
	InfoURI     string         `json:"infoUri"`
	NextURI     string         `json:"nextUri,omitempty"`
	Columns     []columnJSON   `json:"columns,omitempty"`
	Data        [][]any        `json:"data,omitempty"`
	Stats       statementStats `json:"stats"`
	Error       *trinoError    `json:"error,omitempty"`
	Warnings    []any          `json:"warnings"`
	UpdateType  string         `json:"updateType,omitempty"`
	UpdateCount *int64         `json:"updateCount,omitempty"`
}

type statementStats struct {
	State             string `json:"state"`
	Queued            bool   `json:"queued"`
	Scheduled         bool   `json:"scheduled"`
	Nodes             int    `json:"nodes"`
	TotalSplits       int    `json:"totalSplits"`
	QueuedSplits      int    `json:"queuedSplits"`
	RunningSplits     int    `json:"runningSplits"`
	CompletedSplits   int    `json:"completedSplits"`
	CPUTimeMillis     int64  `json:"cpuTimeMillis"`
	WallTimeMillis    int64  `json:"wallTimeMillis"`
	QueuedTimeMillis  int64  `json:"queuedTimeMillis"`
	ElapsedTimeMillis int64  `json:"elapsedTimeMillis"`
	ProcessedRows     int64  `json:"processedRows"`
	ProcessedBytes    int64  `json:"processedBytes"`
	PeakMemoryBytes   int64  `json:"peakMemoryBytes"`
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request, id, body, principal string) {
	sess := sessionFrom(r, principal)
	ctx, cancel := context.WithCancel(context.Background())
	var limit time.Duration
	if v, ok := sess.properties["query_max_run_time"]; ok {
		if d, err := parseDuration(v); err == nil && d > 0 {
			limit = d
			ctx, cancel = context.WithTimeout(context.Background(), d)
		}
	}
	q := &query{
		id: id, sql: body, ctx: ctx, cancel: cancel, timeLimit: limit,
		events: make(chan event, 1),
		done:   make(chan struct{}),
		info: QueryInfo{
			ID: id, SQL: body, User: sess.user, Principal: sess.principal, Source: sess.source,
			Catalog: sess.catalog, Schema: sess.schema, ClientTags: sess.clientTags,
			ClientInfo: sess.clientInfo, Session: sess.properties, State: StateQueued, Created: time.Now(),
		},
	}
	s.mu.Lock()
	s.queries[id] = q
	s.order = append(s.order, id)
	s.mu.Unlock()

	q.touch()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(q.done)
		defer cancel()
		if s.opts.QueueTime > 0 {
			t := time.NewTimer(s.opts.QueueTime)
			select {
			case <-t.C:
			case <-q.ctx.Done():
			}
			t.Stop()
		}
		q.started.Store(time.Now().UnixNano())
		s.run(q, sess)
		q.finished.Store(time.Now().UnixNano())
		if q.ctx.Err() != nil && q.cancelled.Load() {
			q.fail(newError("USER_CANCELED", "Query was canceled", 0, 0))
		}
		if errors.Is(q.ctx.Err(), context.DeadlineExceeded) {
			q.fail(timeLimitError(limit))
		}
		if q.ctx.Err() != nil {
			// Cancelled: drop a page nobody will read.
			select {
			case <-q.events:
			default:
			}
		}
	}()

	resp := queryResults{
		ID: id, InfoURI: s.URL() + "/ui/query.html?" + id,
		NextURI:  s.pageURI(id, 1),
		Stats:    statementStats{State: StateQueued, Queued: true},
		Warnings: []any{},
	}
	b, _ := json.Marshal(resp)
	q.last = b
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// nextPage answers GET <nextUri>: the next page of rows, an empty RUNNING
// page when none is ready within MaxWait, the final page, or the error.
func (s *Server) nextPage(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/statement/executing/")
	id, tok, _ := strings.Cut(rest, "/")
	token, err := strconv.ParseInt(tok, 10, 64)
	s.mu.Lock()
	q, ok := s.queries[id]
	s.mu.Unlock()
	if !ok || err != nil {
		http.Error(w, "Query not found", http.StatusNotFound)
		return
	}
	if r.Method == http.MethodHead { // spooling heartbeat; nothing to do
		w.WriteHeader(http.StatusOK)
		return
	}
	q.touch()
	q.serveMu.Lock()
	defer q.serveMu.Unlock()
	switch {
	case q.cancelled.Load() && (q.last == nil || token > q.token):
		q.last, q.lastHdr = s.buildPage(q, token)
		q.token = token
	case token == q.token && q.last != nil:
		// A retried request: answer exactly what was answered before.
	case token == q.token+1 && !q.ended:
		q.last, q.lastHdr = s.buildPage(q, token)
		q.token = token
	default:
		http.Error(w, "Gone: page "+tok+" of query "+id+" is no longer available", http.StatusGone)
		return
	}
	for k, vs := range q.lastHdr {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(q.last)
}

func (s *Server) buildPage(q *query, token int64) ([]byte, http.Header) {
	resp := queryResults{ID: q.id, InfoURI: s.URL() + "/ui/query.html?" + q.id, Warnings: []any{}}
	resp.Stats = statementStats{State: StateRunning, Scheduled: true, Nodes: 1}
	var hdr http.Header
	finish := func(ev event) {
		q.ended = true
		if ev.err != nil {
			q.fail(ev.err)
			resp.Error = ev.err
			resp.Stats.State = StateFailed
			return
		}
		q.setState(StateFinished)
		resp.Stats.State = StateFinished
		resp.UpdateType = ev.updateType
		resp.UpdateCount = ev.updateCount
	}
	canceled := func() {
		if !q.cancelled.Load() && errors.Is(q.ctx.Err(), context.DeadlineExceeded) {
			finish(event{err: timeLimitError(q.timeLimit)})
			return
		}
		finish(event{err: newError("USER_CANCELED", "Query was canceled", 0, 0)})
	}
	if q.cancelled.Load() {
		canceled()
	} else {
		timer := time.NewTimer(s.opts.MaxWait)
		defer timer.Stop()
		select {
		case ev, ok := <-q.events:
			switch {
			case !ok:
				canceled()
			default:
				if ev.columns != nil {
					q.columns = ev.columns
				}
				hdr = ev.headers
				if len(ev.rows) > 0 {
					resp.Data = ev.rows
					q.mu.Lock()
					q.info.RowsSent += int64(len(ev.rows))
					q.info.Pages++
					q.mu.Unlock()
				}
				if ev.done || ev.err != nil {
					finish(ev)
				} else {
					q.setState(StateRunning)
				}
			}
		case <-q.ctx.Done():
			if q.cancelled.Load() {
				canceled()
			} else {
				// The runner ended (or the server closes); collect its last event.
				select {
				case ev, ok := <-q.events:
					if ok {
						if ev.columns != nil {
							q.columns = ev.columns
						}
						resp.Data = ev.rows
						hdr = ev.headers
						if ev.done || ev.err != nil {
							finish(ev)
						}
					} else {
						canceled()
					}
				default:
					canceled()
				}
			}
		case <-timer.C:
			q.setState(StateRunning)
		case <-s.closing:
			canceled()
		}
	}
	if resp.Error == nil {
		resp.Columns = q.columns
	}
	info := q.snapshot()
	resp.Stats.ProcessedRows = info.RowsRead
	if resp.Stats.State == StateRunning && q.started.Load() == 0 {
		// Still in the queue (Options.QueueTime): say so, as Trino does.
		resp.Stats.State, resp.Stats.Queued, resp.Stats.Scheduled = StateQueued, true, false
	}
	st := q.times(info, resp.Stats.State)
	resp.Stats.QueuedTimeMillis, resp.Stats.ElapsedTimeMillis, resp.Stats.CPUTimeMillis = st.QueuedMillis, st.ElapsedMillis, st.CPUMillis
	resp.Stats.WallTimeMillis = st.ElapsedMillis - st.QueuedMillis
	q.mu.Lock()
	q.info.Stats = st
	q.mu.Unlock()
	if !q.ended {
		resp.NextURI = s.pageURI(q.id, token+1)
	}
	b, _ := json.Marshal(resp)
	return b, hdr
}

// times computes the stats' times of an answer in state, all from one
// reading of the clock, so that queued + CPU never exceed elapsed.
func (q *query) times(info QueryInfo, state string) Stats {
	end := time.Now().UnixNano()
	if !info.Ended.IsZero() {
		end = info.Ended.UnixNano()
	}
	created := info.Created.UnixNano()
	start := end
	if n := q.started.Load(); n != 0 {
		start = min(n, end)
	}
	busyEnd := end
	if n := q.finished.Load(); n != 0 {
		busyEnd = min(n, end)
	}
	ms := func(ns int64) int64 { return max(ns, 0) / int64(time.Millisecond) }
	return Stats{
		State:        state,
		QueuedMillis: ms(start - created), ElapsedMillis: ms(end - created),
		CPUMillis: ms(busyEnd - start - q.sendWait.Load()),
	}
}

func timeLimitError(d time.Duration) *trinoError {
	return newError("EXCEEDED_TIME_LIMIT", fmt.Sprintf("Query exceeded maximum time limit of %.2fs", d.Seconds()), 0, 0)
}

// parseDuration reads an airlift duration as Trino session properties use
// it: "10m", "1.5h", "500ms", "30s", "2d".
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if strings.HasSuffix(v, "d") {
		n, err := strconv.ParseFloat(strings.TrimSuffix(v, "d"), 64)
		return time.Duration(n * float64(24*time.Hour)), err
	}
	return time.ParseDuration(v)
}

var dataSizeRE = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*(B|kB|KB|MB|GB|TB|PB)$`)

// parseDataSize reads an airlift data size as Trino session properties use
// them (512MB, 1GB; powers of 1024).
func parseDataSize(v string) (int64, error) {
	m := dataSizeRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, fmt.Errorf("size is not a valid data size string: %s", v)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	mult := map[string]float64{"B": 1, "kB": 1 << 10, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}[m[2]]
	return int64(f * mult), nil
}
