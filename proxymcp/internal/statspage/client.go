// Package statspage talks to HAProxy's HTTP statistics page: the CSV export
// for reads and, when the page is configured with "stats admin", the admin
// form for server state, health and agent changes.
package statspage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/backendcall"
)

// Client reads one stats page. It is safe for concurrent use.
type Client struct {
	URL      string // e.g. http://127.0.0.1:8404/stats, without credentials
	Username string
	Password string
	Timeout  time.Duration
	HTTP     *http.Client // nil: a client that does not follow redirects
	// Recorder, when set, records each fetch and admin post as one back-end
	// call (mcpfleet_backend_* metrics and a client span): OpCSV, OpAdmin.
	Recorder *backendcall.Recorder
}

// The stats page's operations, as the operation label of the back-end
// metrics (next to the runtime API's command verbs).
const (
	OpCSV   = "stats_page"       // one fetch of the CSV export
	OpAdmin = "stats_page_admin" // one post of the admin form
)

// OutcomeRefused is the outcome label of an admin action the page answered
// but refused (*AdminError): the page works, the request was wrong or not
// allowed.
const OutcomeRefused = "refused"

// ConnError means the page could not be fetched (network, timeout, HTTP status).
type ConnError struct {
	URL    string
	Status int // 0 when no HTTP answer came back
	Err    error
}

func (e *ConnError) Error() string {
	if e.Status == http.StatusUnauthorized {
		return fmt.Sprintf("stats page %s: HTTP 401 (check PROXY_STATS_USERNAME and PROXY_STATS_PASSWORD)", e.URL)
	}
	if e.Status != 0 {
		return fmt.Sprintf("stats page %s: HTTP %d", e.URL, e.Status)
	}
	return fmt.Sprintf("stats page %s: %v", e.URL, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// AdminError is the stats page refusing an admin action.
type AdminError struct {
	Action string
	Status string // st= code from the redirect: ERRP, DENY, EXCD, PART, UNKN ...
}

func (e *AdminError) Error() string {
	return fmt.Sprintf("stats page refused action %q: %s (%s)", e.Action, adminStatusText(e.Status), e.Status)
}

// Denied reports whether the page does not allow admin actions.
func (e *AdminError) Denied() bool { return e.Status == "DENY" }

func adminStatusText(st string) string {
	switch st {
	case "ERRP":
		return "invalid parameters (unknown backend or server?)"
	case "DENY":
		return "admin actions are not allowed on this page (no \"stats admin\" for this client)"
	case "EXCD":
		return "the request was too large"
	case "PART":
		return "the action was only partially processed"
	case "NONE":
		return "nothing changed"
	}
	return "unexpected result"
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (c *Client) do(ctx context.Context, req *http.Request) (*http.Response, context.CancelFunc, error) {
	cancel := context.CancelFunc(func() {})
	if c.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	// The HTTP client may still send on a reused connection after the
	// caller gave up; an admin post must not.
	if err := ctx.Err(); err != nil {
		cancel()
		return nil, nil, &ConnError{URL: c.URL, Err: fmt.Errorf("%w before the request was sent; nothing was sent to HAProxy", err)}
	}
	req = req.WithContext(ctx)
	if c.Username != "" || c.Password != "" {
		req.SetBasicAuth(c.Username, c.Password)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		cancel()
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is reported once, by ConnError
		}
		return nil, nil, &ConnError{URL: c.URL, Err: err}
	}
	return resp, cancel, nil
}

// CSV returns the page's CSV export (the same format as "show stat").
func (c *Client) CSV(ctx context.Context) ([]byte, error) {
	ctx, call := c.Recorder.Start(ctx, OpCSV)
	b, err := c.csv(ctx)
	call.End(err)
	return b, err
}

func (c *Client) csv(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, csvURL(c.URL), nil)
	if err != nil {
		return nil, &ConnError{URL: c.URL, Err: err}
	}
	resp, cancel, err := c.do(ctx, req)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &ConnError{URL: c.URL, Status: resp.StatusCode}
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &ConnError{URL: c.URL, Err: err}
	}
	if !strings.HasPrefix(string(body), "# pxname,") {
		return nil, &ConnError{URL: c.URL, Err: errors.New("the answer is not HAProxy's CSV export (is PROXY_STATS_URL the stats URI?)")}
	}
	return body, nil
}

// csvURL appends HAProxy's ";csv;norefresh" option to the stats URI.
// HAProxy matches the stats URI as a prefix of the whole request URI, so
// the option goes at the very end, even after a query ("stats uri
// /haproxy?stats" serves "/haproxy?stats;csv").
func csvURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Path == "" && u.RawQuery == "" {
		raw += "/"
	}
	return raw + ";csv;norefresh"
}

// Admin actions accepted by the stats page's form.
const (
	ActionReady         = "ready"
	ActionDrain         = "drain"
	ActionMaint         = "maint"
	ActionHealthDisable = "dhlth"
	ActionHealthEnable  = "ehlth"
	ActionHealthUp      = "hrunn"
	ActionHealthNoLB    = "hnolb"
	ActionHealthDown    = "hmaint"
	ActionAgentDisable  = "dagent"
	ActionAgentEnable   = "eagent"
	ActionAgentUp       = "arunn"
	ActionAgentDown     = "adown"
)

// Admin posts one admin action for backend/server. HAProxy answers with a
// redirect whose st= code says what happened.
func (c *Client) Admin(ctx context.Context, backend, server, action string) error {
	ctx, call := c.Recorder.Start(ctx, OpAdmin)
	err := c.admin(ctx, backend, server, action)
	if ae := (*AdminError)(nil); errors.As(err, &ae) {
		call.SetOutcome(OutcomeRefused)
	}
	call.End(err)
	return err
}

func (c *Client) admin(ctx context.Context, backend, server, action string) error {
	form := url.Values{"s": {server}, "action": {action}, "b": {backend}}
	req, err := http.NewRequest(http.MethodPost, c.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return &ConnError{URL: c.URL, Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, cancel, err := c.do(ctx, req)
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		return &ConnError{URL: c.URL, Status: resp.StatusCode}
	}
	st := ""
	loc := resp.Header.Get("Location")
	if i := strings.Index(loc, ";st="); i >= 0 {
		st = loc[i+4:]
		if j := strings.IndexAny(st, ";&"); j >= 0 {
			st = st[:j]
		}
	}
	switch st {
	case "DONE", "NONE":
		return nil
	}
	return &AdminError{Action: action, Status: st}
}
