package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/peterh/liner"
	"golang.org/x/term"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/profile"
)

// historyLimit is how many entries the history file keeps.
const historyLimit = 1000

// errAborted is Ctrl-C at the prompt: drop the statement being typed.
var errAborted = errors.New("aborted")

// lineReader reads the shell's input one line at a time. Prompt returns
// io.EOF at the end of input (Ctrl-D) and errAborted for Ctrl-C.
type lineReader interface {
	Prompt(prompt string) (string, error)
	AppendHistory(entry string)
	Close() error
}

// termReader edits lines on a terminal with arrow keys and history.
type termReader struct{ l *liner.State }

func (t *termReader) Prompt(p string) (string, error) {
	s, err := t.l.Prompt(p)
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", errAborted
	}
	return s, err
}
func (t *termReader) AppendHistory(e string) { t.l.AppendHistory(e) }
func (t *termReader) Close() error           { return t.l.Close() }

// plainReader reads lines from a pipe or file without prompts.
type plainReader struct{ r *bufio.Reader }

func (p *plainReader) Prompt(string) (string, error) {
	line, err := p.r.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
func (p *plainReader) AppendHistory(string) {}
func (p *plainReader) Close() error         { return nil }

// shellState is the interactive shell's state.
type shellState struct {
	a        *app
	s        *session
	in       lineReader
	format   string
	history  []string
	histPath string
	terminal bool
	sigs     chan os.Signal
	failed   bool // a statement failed (exit status 1 when input is not a terminal)
}

// shell runs the interactive SQL shell until \q or end of input.
func (a *app) shell() error {
	s, err := a.connect()
	if err != nil {
		return err
	}
	defer s.close()
	// The process may cancel its root context on SIGINT (main does, for the
	// one-shot commands); in the shell Ctrl-C must cancel only the running
	// statement, so statements hang off a context that ignores that.
	// SIGTERM and SIGHUP end the shell below instead.
	a.ctx = context.WithoutCancel(a.ctx)
	sh := &shellState{a: a, s: s, format: a.format()}

	dir, err := profile.Dir(a.getenv)
	if err == nil {
		sh.histPath = filepath.Join(dir, "history")
		sh.loadHistory()
	}

	inFile, inOK := a.stdin.(*os.File)
	outFile, outOK := a.stdout.(*os.File)
	sh.terminal = inOK && outOK && term.IsTerminal(int(inFile.Fd())) && term.IsTerminal(int(outFile.Fd())) &&
		inFile == os.Stdin && outFile == os.Stdout
	if sh.terminal {
		l := liner.NewLiner()
		l.SetCtrlCAborts(true)
		l.SetMultiLineMode(true)
		l.SetTabCompletionStyle(liner.TabPrints)
		l.SetWordCompleter((&completer{sh: sh}).Complete)
		for _, h := range sh.history {
			l.AppendHistory(h)
		}
		sh.in = &termReader{l: l}
	} else {
		sh.in = &plainReader{r: bufio.NewReader(a.stdin)}
	}
	defer sh.in.Close()

	// SIGINT reaches us only while a statement runs (the line editor reads
	// Ctrl-C as a key at the prompt); it cancels that statement, not the shell.
	sh.sigs = make(chan os.Signal, 1)
	signal.Notify(sh.sigs, os.Interrupt)
	defer signal.Stop(sh.sigs)
	stopTerm := sh.exitOnTerminate()
	defer stopTerm()

	if sh.terminal {
		fmt.Fprintf(a.stdout, "sqlmcp shell on %s:%d as %s. End statements with ';'. \\help for help, \\q to quit.\n", s.conn.Host, s.conn.Port, s.conn.User)
	}
	err = sh.loop()
	if err == nil && sh.failed && !sh.terminal {
		return errors.New("one or more statements failed (see above)")
	}
	return err
}

// exitOnTerminate ends the process on SIGTERM or SIGHUP with the terminal
// restored and the history saved: the line editor blocks reading the
// terminal, so returning from the loop is not possible.
func (sh *shellState) exitOnTerminate() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			sh.in.Close()
			fmt.Fprintf(sh.a.stderr, "\nsqlmcp: %v; leaving the shell\n", sig)
			os.Exit(ExitRuntime)
		case <-done:
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

func (sh *shellState) prompt(continuation bool) string {
	p := "sqlmcp"
	switch {
	case sh.s.catalog != "" && sh.s.schema != "":
		p += ":" + sh.s.catalog + "." + sh.s.schema
	case sh.s.catalog != "":
		p += ":" + sh.s.catalog
	}
	if continuation {
		return strings.Repeat(" ", max(len(p)-1, 0)) + "-> "
	}
	return p + "> "
}

func (sh *shellState) loop() error {
	var buf strings.Builder
	for {
		line, err := sh.in.Prompt(sh.prompt(buf.Len() > 0))
		switch {
		case errors.Is(err, errAborted):
			buf.Reset()
			continue
		case errors.Is(err, io.EOF):
			if sh.terminal {
				fmt.Fprintln(sh.a.stdout)
			} else if !blankSQL(buf.String()) {
				// A script piped in may omit the last ';'.
				sh.record(strings.TrimSpace(buf.String()))
				sh.run(buf.String())
			}
			return nil
		case err != nil:
			return fmt.Errorf("read the next line: %w", err)
		}
		if buf.Len() == 0 && strings.HasPrefix(strings.TrimSpace(line), `\`) {
			entry := strings.TrimSpace(line)
			sh.record(entry)
			if quit := sh.meta(entry); quit {
				return nil
			}
			continue
		}
		if buf.Len() > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(line)
		stmts, rest, _ := splitStatements(buf.String())
		if len(stmts) == 0 && blankSQL(rest) && strings.Contains(buf.String(), ";") {
			buf.Reset() // only ';' and comments
			continue
		}
		if len(stmts) == 0 {
			if blankSQL(buf.String()) && !strings.Contains(buf.String(), "/*") {
				buf.Reset()
			}
			continue
		}
		// History keeps whole statements on one line.
		done := buf.String()[:len(buf.String())-len(rest)]
		sh.record(historyEntry(done))
		for _, st := range stmts {
			sh.run(st)
		}
		buf.Reset()
		if !blankSQL(rest) {
			buf.WriteString(strings.TrimLeft(rest, " \t"))
		}
	}
}

// record adds an entry to the history and the history file.
func (sh *shellState) record(entry string) {
	if entry == "" || (len(sh.history) > 0 && sh.history[len(sh.history)-1] == entry) {
		return
	}
	sh.history = append(sh.history, entry)
	if len(sh.history) > historyLimit {
		sh.history = sh.history[len(sh.history)-historyLimit:]
	}
	sh.in.AppendHistory(entry)
	if sh.terminal {
		sh.saveHistory()
	}
}

func (sh *shellState) loadHistory() {
	b, err := os.ReadFile(sh.histPath)
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			sh.history = append(sh.history, l)
		}
	}
	if len(sh.history) > historyLimit {
		sh.history = sh.history[len(sh.history)-historyLimit:]
	}
}

// saveHistory rewrites the history file (mode 0600: statements may hold
// sensitive literals). Failure is reported once and does not stop the shell.
func (sh *shellState) saveHistory() {
	if sh.histPath == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(sh.histPath), 0o700); err == nil {
		err = os.WriteFile(sh.histPath, []byte(strings.Join(sh.history, "\n")+"\n"), 0o600)
		if err == nil {
			return
		}
	}
	fmt.Fprintf(sh.a.stderr, "warning: cannot write the history file %s; history will not be kept\n", sh.histPath)
	sh.histPath = ""
}

// report prints an error of one statement.
func (sh *shellState) report(err error) {
	sh.failed = true
	fmt.Fprintf(sh.a.stderr, "Error: %s\n", cliMessage(err))
}

// statementContext returns a context cancelled by Ctrl-C (SIGINT).
func (sh *shellState) statementContext() (context.Context, func()) {
	// Drop an interrupt that arrived between statements.
	select {
	case <-sh.sigs:
	default:
	}
	ctx, cancel := context.WithCancel(sh.a.ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-sh.sigs:
			cancel()
		case <-done:
		}
	}()
	return ctx, func() { close(done); cancel() }
}

// run executes one complete statement.
func (sh *shellState) run(stmt string) {
	if target, ok := useTarget(stmt); ok {
		sh.use(target)
		return
	}
	ctx, stop := sh.statementContext()
	defer stop()
	err := sh.a.query(ctx, sh.s, stmt, sh.format, sh.a.stdout, true)
	if err != nil {
		if ctx.Err() != nil && sh.a.ctx.Err() == nil {
			fmt.Fprintln(sh.a.stderr, "Query cancelled; it was cancelled on the engine too.")
			sh.failed = true
			return
		}
		sh.report(err)
	}
}

// useTarget recognises USE catalog.schema (or USE schema).
func useTarget(stmt string) (string, bool) {
	f := strings.Fields(stmt)
	if len(f) == 0 || !strings.EqualFold(f[0], "USE") {
		return "", false
	}
	return strings.TrimSpace(stmt[len(f[0]):]), true
}

// use changes the session's default catalog and schema after checking that
// the schema exists (as the engine's own USE does).
func (sh *shellState) use(target string) {
	parts, err := engine.SplitName(target)
	if err != nil || len(parts) > 2 {
		sh.report(fmt.Errorf("USE needs catalog.schema or schema, not %q", target))
		return
	}
	catalog, schema := sh.s.catalog, parts[0]
	if len(parts) == 2 {
		catalog, schema = parts[0], parts[1]
	}
	if catalog == "" {
		sh.report(fmt.Errorf("USE %s: no current catalog; write USE catalog.schema", target))
		return
	}
	ctx, stop := sh.statementContext()
	defer stop()
	schemas, err := sh.s.client.Schemas(ctx, catalog)
	if err != nil {
		sh.report(err)
		return
	}
	if !slices.Contains(schemas, schema) {
		sh.report(fmt.Errorf("USE %s.%s: schema %q does not exist in catalog %q; \\schemas %s lists them", catalog, schema, schema, catalog, catalog))
		return
	}
	sh.s.catalog, sh.s.schema = catalog, schema
	fmt.Fprintln(sh.a.stdout, "USE")
}

const shellHelp = `Statements end with ';' and may span several lines. Ctrl-C cancels the
running statement (or the line being typed); Ctrl-D or \q leaves.

  \help                      this help
  \q, \quit, \exit           leave the shell
  \history                   list the statement history
  \catalogs                  list the catalogs
  \schemas [catalog]         list the schemas of a catalog (default: current)
  \tables [catalog schema]   list the tables of a schema (default: current)
  \describe <table>          show a table's columns (table, schema.table or catalog.schema.table,
                             or catalog schema table as three names)
  \format <table|json|csv>   change the output format
  USE catalog.schema;        change the defaults for unqualified names
`

// meta runs a backslash command; it reports whether the shell should end.
func (sh *shellState) meta(line string) bool {
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";"))
	cmd, args := f[0], f[1:]
	w := sh.a.stdout
	ctx, stop := sh.statementContext()
	defer stop()
	var err error
	switch cmd {
	case `\q`, `\quit`, `\exit`:
		return true
	case `\help`, `\h`, `\?`:
		io.WriteString(w, shellHelp)
	case `\history`:
		for i, h := range sh.history {
			fmt.Fprintf(w, "%5d  %s\n", i+1, h)
		}
	case `\format`:
		if len(args) != 1 || !slices.Contains(formatNames, args[0]) {
			err = fmt.Errorf(`\format takes table, json or csv (now %s)`, sh.format)
			break
		}
		sh.format = args[0]
		fmt.Fprintf(w, "Output format is now %s.\n", sh.format)
	case `\catalogs`:
		var cats []string
		if cats, err = sh.s.client.Catalogs(ctx); err == nil {
			err = printRows(sh.format, w, []Column{{"catalog", "varchar"}}, stringRows(cats), 0)
		}
	case `\schemas`:
		if len(args) > 1 {
			err = errors.New(`\schemas takes at most a catalog name`)
			break
		}
		err = sh.a.listSchemas(ctx, sh.s, firstArg(args), sh.format, w)
	case `\tables`:
		switch len(args) {
		case 0:
			err = sh.a.listTables(ctx, sh.s, "", "", sh.format, w)
		case 2:
			err = sh.a.listTables(ctx, sh.s, args[0], args[1], sh.format, w)
		default:
			err = errors.New(`\tables takes no arguments or a catalog and a schema`)
		}
	case `\describe`, `\d`:
		switch len(args) {
		case 1:
			err = sh.a.describe(ctx, sh.s, args[0], sh.format, w)
		case 3:
			err = sh.a.describeTable(ctx, sh.s, args[0], args[1], args[2], sh.format, w)
		default:
			err = errors.New(`\describe takes a table name, or a catalog, a schema and a table`)
		}
	default:
		err = fmt.Errorf(`unknown command %s; \help lists the commands`, cmd)
	}
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			err = errors.New(ue.msg)
		}
		sh.report(err)
	}
	return false
}
