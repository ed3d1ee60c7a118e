package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfleet/mcpfleet/shared/jsonscan"
	"github.com/mcpfleet/mcpfleet/shared/tasks"
)

// stdioGate sits between the process's stdin/stdout and mcp-go's stdio
// server. mcp-go cancels every running request as soon as its input ends;
// the gate holds the end of input back until each request read so far has
// been answered (or the shutdown timeout passes), so that
// `echo '{...}' | server` prints its answer and a SIGTERM lets calls finish.
//
// It also answers the quick methods (quickMethods) itself, on the goroutine
// that reads stdin: mcp-go serves every request on a goroutine of its own,
// and that hand-off (a thread wake-up while the reader blocks in read) cost
// more than the whole answer to a ping.
type stdioGate struct {
	lines   chan []byte
	readErr error // set before lines is closed
	stop    chan struct{}
	stopped sync.Once
	aliases map[string]string
	max     int64 // longest line accepted (MCP_MAX_REQUEST_BYTES)
	timeout time.Duration
	calls   *calls
	mcp     *server.MCPServer
	// session is the context mcp-go serves requests with (it carries the
	// stdio session), set once mcp-go's Listen has registered the session;
	// until then every line goes to mcp-go.
	session atomic.Pointer[context.Context]
	// sessionSet is closed once session is.
	sessionSet     chan struct{}
	sessionSetOnce sync.Once

	mu      sync.Mutex
	pending map[string]int // request id (raw JSON) → unanswered count
	answers chan struct{}  // signalled on each answer
	buf     []byte         // rest of the current line
	ended   bool

	out *stdoutTap

	// listens are the task status listens being served (see listen), by
	// request id; listensOver is set once input has ended.
	listens     map[string]*statusListen
	listensOver bool
	listening   sync.WaitGroup
}

// statusListen is one subscriptions/listen the gate serves.
type statusListen struct{ cancel context.CancelFunc }

func newStdioGate(stdin io.Reader, stdout io.Writer, aliases map[string]string, max int64, timeout time.Duration, c *calls, mcp *server.MCPServer) *stdioGate {
	g := &stdioGate{
		mcp:     mcp,
		max:     max,
		lines:   make(chan []byte),
		stop:    make(chan struct{}),
		aliases: aliases,
		timeout: timeout,
		calls:   c,
		pending: map[string]int{},
		answers: make(chan struct{}, 1),
		listens: map[string]*statusListen{},

		sessionSet: make(chan struct{}),
	}
	g.out = &stdoutTap{w: stdout, gate: g}
	go g.readLines(stdin)
	return g
}

func (g *stdioGate) readLines(stdin io.Reader) {
	r := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, tooLong, err := readLine(r, g.max)
		if tooLong {
			// The line is answered here and never reaches mcp-go; the
			// next line is served as usual.
			g.out.Write(append(tooLargeError(leadingID(line), g.max), '\n'))
		} else if len(line) > 0 {
			line, await, method := g.admit(line)
			session := g.session.Load()
			if session != nil && quickMethods[method] {
				g.answer(*session, line) // its answer, through g.out, ends the wait
			} else if answer, ok := g.modern(session, method, line); ok {
				g.out.Write(append(answer, '\n'))
			} else if serve := g.statusListen(method, line); serve != nil {
				g.listen(session, await, serve)
			} else if uri, ok := readOf(method, line); ok {
				g.readResource(session, await, uri, line)
			} else {
				select {
				case g.lines <- line:
				case <-g.stop:
					if await != "" {
						g.answered(await) // never delivered: nothing to wait for
					}
					return
				}
			}
		}
		if err != nil {
			g.readErr = err
			g.endListens()
			close(g.lines)
			return
		}
	}
}

// modern answers the 2026-07-28 tasks extension's requests over stdio as
// the keeper's Wrap does over HTTP (shared/tasks.Keeper.Modern): a
// tools/call from a client declaring the extension becomes a task, and
// tasks/get, tasks/update and tasks/cancel answer for it.
func (g *stdioGate) modern(session *context.Context, method string, line []byte) ([]byte, bool) {
	switch method {
	case "tasks/get", "tasks/update", "tasks/cancel":
	case "tools/call":
		if !bytes.Contains(line, []byte(tasks.ExtensionID)) {
			return nil, false // no extension declared: mcp-go's, as before
		}
	default:
		return nil, false
	}
	m := tasks.ModernFor(g.mcp)
	if m == nil {
		return nil, false
	}
	if session = g.sessionCtx(session); session == nil {
		return nil, false
	}
	return m(*session, bytes.TrimSpace(line))
}

// sessionCtx returns session, or waits for it: the first lines can come
// before mcp-go has registered the session (it does so as Listen starts,
// before reading). nil once the gate has stopped.
func (g *stdioGate) sessionCtx(session *context.Context) *context.Context {
	if session != nil {
		return session
	}
	select {
	case <-g.sessionSet:
		return g.session.Load()
	case <-g.stop:
		return nil
	}
}

// statusListen returns how to serve a 2026-07-28 subscriptions/listen
// naming task ids (the tasks extension's status notifications), or nil:
// mcp-go's own listen knows no taskIds.
func (g *stdioGate) statusListen(method string, line []byte) func(context.Context, func([]byte)) {
	if method != "subscriptions/listen" {
		return nil
	}
	l := tasks.ListenFor(g.mcp)
	if l == nil {
		return nil
	}
	return l(bytes.TrimSpace(line))
}

// listen serves a task status listen on a goroutine of its own, its
// messages written as lines on stdout, so that the requests after it are
// served meanwhile. It ends with its result once its tasks have ended, on
// a notifications/cancelled naming its id (endListen: nothing more is
// sent, as the specification lets a cancelled request go unanswered), or
// when input ends (endListens). It holds no end of input back: a listen
// lasts as long as the client keeps it, so drain does not wait for it.
func (g *stdioGate) listen(session *context.Context, id string, serve func(context.Context, func([]byte))) {
	g.answered(id)
	if session = g.sessionCtx(session); session == nil {
		return
	}
	ctx, cancel := context.WithCancel(*session)
	l := &statusListen{cancel: cancel}
	g.mu.Lock()
	if g.listensOver {
		g.mu.Unlock()
		cancel()
		return
	}
	if old := g.listens[id]; old != nil {
		old.cancel() // a request id in use again: the client has given up the earlier listen
	}
	g.listens[id] = l
	g.listening.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.listening.Done()
		defer cancel()
		serve(ctx, func(msg []byte) { g.out.Write(append(msg, '\n')) })
		g.mu.Lock()
		if g.listens[id] == l {
			delete(g.listens, id)
		}
		g.mu.Unlock()
	}()
}

// endListen ends the listen with request id id, if one is open.
func (g *stdioGate) endListen(id string) {
	g.mu.Lock()
	l := g.listens[id]
	delete(g.listens, id)
	g.mu.Unlock()
	if l != nil {
		l.cancel()
	}
}

// endListens ends every listen: input has ended (or the server is shutting
// down), and with it the client's subscriptions.
func (g *stdioGate) endListens() {
	g.mu.Lock()
	g.listensOver = true
	open := g.listens
	g.listens = map[string]*statusListen{}
	g.mu.Unlock()
	for _, l := range open {
		l.cancel()
	}
}

// readOf returns the URI of a resources/read line; method is admit's
// ("" when it left the line to admitSlow: an alias, escapes).
func readOf(method string, line []byte) (string, bool) {
	if method != "" && method != string(mcp.MethodResourcesRead) {
		return "", false
	}
	return resourceRead(bytes.TrimSpace(line))
}

// readResource serves a resources/read as mcp-go's stdio server would, on
// a goroutine of its own, and adds the URI to its not-found error
// (withResourceURI, SEP-2164).
func (g *stdioGate) readResource(session *context.Context, await, uri string, line []byte) {
	line = bytes.TrimSpace(line)
	go func() {
		if session = g.sessionCtx(session); session == nil {
			g.answered(await) // never served: nothing to wait for
			return
		}
		resp := g.handle(*session, line)
		b, err := json.Marshal(resp)
		if err != nil {
			b, _ = json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, "cannot encode the answer: "+err.Error(), nil))
		}
		g.out.Write(append(withResourceURI(b, uri), '\n'))
	}()
}

// idPrefixBytes is how much of an oversized line is kept to find its id.
const idPrefixBytes = 4 << 10

// readLine reads one line (with its newline) of at most max bytes. A longer
// line is consumed to its end without being kept: tooLong is true and line
// holds only its first idPrefixBytes, so memory stays bounded by max.
func readLine(r *bufio.Reader, max int64) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if int64(len(line)+len(chunk)) > max+1 || (int64(len(line)+len(chunk)) == max+1 && chunk[len(chunk)-1] != '\n') {
				tooLong = true
				keep := min(idPrefixBytes-len(line), len(chunk))
				if keep > 0 {
					line = append(line, chunk[:keep]...)
				}
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}

// leadingID returns the "id" of a JSON-RPC request from the start of its
// text when the id comes before anything too long to read (clients write
// jsonrpc, id and method before params), or nil.
func leadingID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			switch t := bytes.TrimSpace(v); {
			case len(t) > 0 && (t[0] == '"' || t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
				return t
			}
			return nil
		}
	}
	return nil
}

// shutdown ends input after in-flight requests (signal path); listens end
// at once.
func (g *stdioGate) shutdown() {
	g.stopped.Do(func() { close(g.stop) })
	g.endListens()
}

// close shuts down and waits for the listens' goroutines to return, so
// that none outlives the server.
func (g *stdioGate) close() {
	g.shutdown()
	g.listening.Wait()
}

// Read implements io.Reader for mcp-go.
func (g *stdioGate) Read(p []byte) (int, error) {
	g.mu.Lock()
	if len(g.buf) > 0 {
		n := copy(p, g.buf)
		g.buf = g.buf[n:]
		g.mu.Unlock()
		return n, nil
	}
	ended := g.ended
	g.mu.Unlock()
	if ended {
		return 0, io.EOF
	}
	select {
	case line, ok := <-g.lines:
		if !ok {
			g.drain()
			return 0, io.EOF
		}
		g.mu.Lock()
		n := copy(p, line)
		g.buf = line[n:]
		g.mu.Unlock()
		return n, nil
	case <-g.stop:
		g.drain()
		return 0, io.EOF
	}
}

// quickMethods are the requests the gate answers on its reading goroutine
// (see stdioGate): they read only the server's own tables, never block and
// never reach a back end. Everything else (tool calls, resource reads,
// subscriptions, tasks) keeps a goroutine of its own in mcp-go.
var quickMethods = map[string]bool{
	"ping":                     true,
	"tools/list":               true,
	"prompts/list":             true,
	"resources/list":           true,
	"resources/templates/list": true,
}

// setSession hands the gate mcp-go's request context (see session).
func (g *stdioGate) setSession(ctx context.Context) context.Context {
	g.session.Store(&ctx)
	g.sessionSetOnce.Do(func() { close(g.sessionSet) })
	return ctx
}

// answer serves one quick request as mcp-go's stdio server would, hooks and
// all, and writes its answer.
func (g *stdioGate) answer(ctx context.Context, line []byte) {
	resp := g.handle(ctx, bytes.TrimSpace(line))
	if resp == nil {
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, "cannot encode the answer: "+err.Error(), nil))
	}
	g.out.Write(append(b, '\n'))
}

// handle is mcp-go's HandleMessage, with a panic turned into an internal
// error as mcp-go's stdio server does.
func (g *stdioGate) handle(ctx context.Context, msg []byte) (resp mcp.JSONRPCMessage) {
	defer func() {
		if r := recover(); r != nil {
			var id any
			if raw, _, _ := g.scanRequest(msg); raw != nil {
				_ = json.Unmarshal(raw, &id)
			}
			resp = mcp.NewJSONRPCError(mcp.NewRequestId(id), mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r), nil)
		}
	}()
	return g.mcp.HandleMessage(ctx, msg)
}

// admit rewrites aliases and records the request id awaiting an answer,
// which it returns (normalised; "" for none) with the method when the line
// is a plain request (else "").
func (g *stdioGate) admit(line []byte) (out []byte, await, method string) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return line, "", ""
	}
	if id, name, decided := g.scanRequest(trimmed); decided {
		if id != nil {
			await = normalizeID(id)
			g.mu.Lock()
			g.pending[await]++
			g.mu.Unlock()
		}
		return line, await, string(name)
	}
	out, await = g.admitSlow(line, trimmed)
	return out, await, ""
}

// scanRequest is admitSlow for the common line — valid JSON, plain keys, a
// plain method that is no alias and not a cancellation — without decoding
// it: it returns the id to await (nil for none), the method of a request
// with an id, and decided true, or decided false to leave the line to
// admitSlow. TestAdmitFastAgrees holds it to admitSlow's answers.
func (g *stdioGate) scanRequest(trimmed []byte) (id json.RawMessage, method []byte, decided bool) {
	if !json.Valid(trimmed) {
		return nil, nil, true // admitSlow's decoding fails too: nothing to await
	}
	var f [jsonscan.MaxFields]jsonscan.Field
	n, ok := jsonscan.TopFields(trimmed, &f)
	if !ok {
		return nil, nil, false
	}
	// The alias rewrite reads the exact key "method" (a map), the request
	// the case-insensitive one (a struct). A member named twice goes to
	// admitSlow: encoding/json's rules for repeats are its own.
	var exactMethod, params, rawID []byte
	for _, m := range f[:n] {
		var slot *[]byte
		switch {
		case bytes.EqualFold(m.Key, []byte("method")):
			slot = &method
			if string(m.Key) == "method" {
				if exactMethod != nil {
					return nil, nil, false
				}
				exactMethod = m.Val
			}
		case bytes.EqualFold(m.Key, []byte("id")):
			slot = &rawID
		case bytes.EqualFold(m.Key, []byte("params")):
			slot = &params
		default:
			continue
		}
		if *slot != nil {
			return nil, nil, false
		}
		*slot = m.Val
	}
	if len(g.aliases) > 0 && exactMethod != nil {
		name, plain := jsonscan.PlainString(exactMethod)
		if !plain {
			return nil, nil, false
		}
		if _, alias := g.aliases[string(name)]; alias {
			return nil, nil, false
		}
	}
	if params != nil && params[0] != '{' && string(params) != "null" {
		return nil, nil, true // params is no object: the decoding fails
	}
	if method == nil || string(method) == "null" {
		return nil, nil, true // no method: nothing to await
	}
	name, plain := jsonscan.PlainString(method)
	switch {
	case !plain && method[0] == '"':
		return nil, nil, false // escapes
	case !plain:
		return nil, nil, true // not a string: the decoding fails
	case len(name) == 0:
		return nil, nil, true
	case string(name) == "notifications/cancelled":
		return nil, nil, false
	}
	if len(rawID) == 0 || string(rawID) == "null" {
		return nil, nil, true
	}
	return rawID, name, true
}

// admitSlow is admit with encoding/json, for every line scanRequest leaves.
func (g *stdioGate) admitSlow(line, trimmed []byte) (out []byte, await string) {
	if len(g.aliases) > 0 {
		if re, rewritten := rewriteMethod(trimmed, g.aliases); rewritten {
			line = append(re, '\n')
			trimmed = re
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(trimmed, &m) != nil || m.Method == "" {
		return line, ""
	}
	switch {
	case m.Method == "notifications/cancelled" && len(m.Params.RequestID) > 0:
		// The specification lets a server leave a cancelled request
		// unanswered; never hold the end of input for one. A task status
		// listen ends so (see listen).
		g.answered(normalizeID(m.Params.RequestID))
		g.endListen(normalizeID(m.Params.RequestID))
	case len(m.ID) > 0 && string(m.ID) != "null":
		await = normalizeID(m.ID)
		g.mu.Lock()
		g.pending[await]++
		g.mu.Unlock()
	}
	return line, await
}

// drain waits until every admitted request has been answered or the
// timeout passes, then marks input as ended.
func (g *stdioGate) drain() {
	deadline := time.NewTimer(g.timeout)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		n := len(g.pending)
		g.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-g.answers:
		case <-deadline.C:
			g.calls.hardEnd()
			g.mu.Lock()
			g.ended = true
			g.mu.Unlock()
			return
		}
	}
	// Calls that were not requests with ids (none expected) still get the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	g.calls.wait(ctx)
	cancel()
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
}

func (g *stdioGate) answered(id string) {
	g.mu.Lock()
	if _, ok := g.pending[id]; !ok {
		g.mu.Unlock()
		return
	}
	if g.pending[id] > 1 {
		g.pending[id]--
	} else {
		delete(g.pending, id)
	}
	g.mu.Unlock()
	select {
	case g.answers <- struct{}{}:
	default:
	}
}

// stdoutTap passes output through unchanged and notes which requests have
// been answered.
type stdoutTap struct {
	mu   sync.Mutex
	w    io.Writer
	gate *stdioGate
	line []byte
}

func (t *stdoutTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, err := t.w.Write(p)
	if len(t.line) == 0 {
		// The usual write is whole lines (mcp-go writes one message and
		// its newline at once): inspect them in place, keep only a rest.
		rest := p[:n]
		for {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				break
			}
			t.inspect(rest[:i])
			rest = rest[i+1:]
		}
		if len(rest) > 0 {
			t.line = append(t.line, rest...)
		}
		return n, err
	}
	t.line = append(t.line, p[:n]...)
	for {
		i := bytes.IndexByte(t.line, '\n')
		if i < 0 {
			break
		}
		t.inspect(t.line[:i])
		t.line = t.line[i+1:]
	}
	if len(t.line) == 0 {
		t.line = nil
	}
	return n, err
}

func (t *stdoutTap) inspect(msg []byte) {
	if id, ok := responseID(msg); ok {
		t.gate.answered(normalizeID(id))
	}
}

// responseID returns the id of a JSON-RPC response (an object with an id and
// no method). It reads the top-level keys in order and stops at "result" or
// "error" once the id is known, so a large result (mcp-go writes the id
// first) is not parsed a second time.
func responseID(msg []byte) (json.RawMessage, bool) {
	if id, isResp, ok := responseIDFast(msg); ok {
		return id, isResp
	}
	return responseIDSlow(msg)
}

// responseIDFast is responseIDSlow by scanning bytes (see jsonscan.TopFields); ok
// false leaves msg to responseIDSlow (a key with escapes, text it cannot
// scan). TestResponseIDFastAgrees holds it to responseIDSlow's answers.
func responseIDFast(msg []byte) (id json.RawMessage, isResp, ok bool) {
	i, empty, ok := jsonscan.OpenObject(msg)
	if !ok || empty {
		return nil, false, false
	}
	for {
		key, v, ok := jsonscan.MemberKey(msg, i)
		if !ok {
			return nil, false, false
		}
		switch string(key) {
		case "method":
			return nil, false, true
		case "result", "error":
			if len(id) > 0 {
				return id, true, true
			}
		}
		end, good := jsonscan.SkipValue(msg, v)
		if !good || !json.Valid(msg[v:end]) {
			return nil, false, false
		}
		if string(key) == "id" {
			id = msg[v:end]
		}
		next, closed, ok := jsonscan.AfterValue(msg, end)
		if !ok {
			return nil, false, false
		}
		if closed {
			return id, len(id) > 0, true
		}
		i = next
	}
}

// responseIDSlow is responseID with encoding/json's decoder.
func responseIDSlow(msg []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch tok {
		case "method":
			return nil, false
		case "id":
			if err := dec.Decode(&id); err != nil {
				return nil, false
			}
			continue
		case "result", "error":
			if len(id) > 0 {
				return id, true
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, false
	}
	return id, len(id) > 0
}

// normalizeID gives equal ids one spelling whatever their whitespace or escapes.
func normalizeID(raw json.RawMessage) string {
	if canonicalID(raw) {
		return string(raw) // already the one spelling: skip decoding and encoding per message
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// canonicalID reports whether raw is spelled as json.Marshal would spell
// it: a small integer without sign oddities or leading zeros, or a string
// of plain printable ASCII without escapes or characters Marshal escapes.
func canonicalID(raw json.RawMessage) bool {
	n := len(raw)
	if n == 0 {
		return false
	}
	if raw[0] == '"' {
		if n < 2 || raw[n-1] != '"' {
			return false
		}
		for _, c := range raw[1 : n-1] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	digits := raw
	if raw[0] == '-' {
		digits = raw[1:]
	}
	// Up to 15 digits: exactly representable as float64, so Marshal
	// prints them the same.
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) || (raw[0] == '-' && digits[0] == '0') {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
