package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/engine"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/sqlguard"
)

// ExplainEstimate is explain_query's type that returns the engine's input
// estimate (the figures the query budgets are judged by).
const ExplainEstimate = "estimate"

// budgeted reports whether a read budget is set (on this view's
// cluster).
func (t *Tools) budgeted() bool { return t.opts.MaxScanBytes > 0 || t.opts.MaxScanRows > 0 }

// anyBudget reports whether any cluster has a read budget: execute_query
// then needs the pipeline's approval path.
func (t *Tools) anyBudget() bool {
	if t.budgeted() {
		return true
	}
	for _, v := range t.byName {
		if v.budgeted() {
			return true
		}
	}
	return false
}

// overBudget says why est exceeds the budgets ("" when it does not); an
// unknown figure under a set budget cannot be shown to fit and counts as
// over.
func (t *Tools) overBudget(est *engine.Estimate) string {
	var why []string
	if t.opts.MaxScanRows > 0 {
		switch {
		case est.Rows == nil:
			why = append(why, "the estimated rows are unknown and SQLENGINE_MAX_SCAN_ROWS is "+thousands(t.opts.MaxScanRows))
		case *est.Rows > float64(t.opts.MaxScanRows):
			why = append(why, "an estimated "+thousands(int64(*est.Rows))+" rows exceed SQLENGINE_MAX_SCAN_ROWS="+thousands(t.opts.MaxScanRows))
		}
	}
	if t.opts.MaxScanBytes > 0 {
		switch {
		case est.Bytes == nil:
			why = append(why, "the estimated bytes are unknown and SQLENGINE_MAX_SCAN_BYTES is "+size(float64(t.opts.MaxScanBytes)))
		case *est.Bytes > float64(t.opts.MaxScanBytes):
			why = append(why, "an estimated "+size(*est.Bytes)+" exceed SQLENGINE_MAX_SCAN_BYTES="+size(float64(t.opts.MaxScanBytes)))
		}
	}
	if len(why) > 0 && t.cluster != "" {
		// The cluster's own SQLENGINE_<NAME>_* value, or the shared one.
		why[len(why)-1] += " (the budget of cluster " + t.cluster + ")"
	}
	return strings.Join(why, "; ")
}

// estimateText words an estimate: per table and in total, unknown as
// "unknown".
func estimateText(est *engine.Estimate) string {
	fig := func(f engine.Figure, bytes bool) string {
		if f == nil {
			return "unknown"
		}
		if bytes {
			return size(*f)
		}
		return thousands(int64(*f))
	}
	var b strings.Builder
	b.WriteString("estimated input (" + est.Source + "): ")
	for _, te := range est.Tables {
		fmt.Fprintf(&b, "%s.%s.%s %s rows, %s; ", te.Catalog, te.Schema, te.Table, fig(te.Rows, false), fig(te.Bytes, true))
	}
	fmt.Fprintf(&b, "total %s rows, %s", fig(est.Rows, false), fig(est.Bytes, true))
	return b.String()
}

// size formats bytes with a binary unit.
func size(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(b, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(b, 'f', 1, 64) + " " + units[i]
}

// estimate asks the engine for the statement's input estimate (nothing
// is executed).
func (t *Tools) estimate(ctx context.Context, st *sqlguard.Statement, q engine.Query) (*engine.Estimate, error) {
	return t.eng.Estimate(ctx, engine.Query{SQL: st.Inner, Catalog: q.Catalog, Schema: q.Schema})
}
