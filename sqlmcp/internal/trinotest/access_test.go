package trinotest_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/shared/httpauth/idptest"
	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

func TestParseAccessRulesEdgeCases(t *testing.T) {
	for name, tc := range map[string]struct{ json, want string }{
		"unknown field":      {`{"tables":[{"user":"a","privileges":[],"filtr":"x"}]}`, "unknown field"},
		"bad regex":          {`{"tables":[{"user":"(a","privileges":[]}]}`, "tables[0]: user is not a regular expression"},
		"bad allow":          {`{"catalogs":[{"catalog":"x","allow":"yes"}]}`, "allow must be all, read-only or none"},
		"missing privileges": {`{"tables":[{"user":"a"}]}`, "privileges is required"},
		"unknown privilege":  {`{"tables":[{"privileges":["READ"]}]}`, `unknown privilege "READ"`},
		"mask and deny":      {`{"tables":[{"privileges":["SELECT"],"columns":[{"name":"c","allow":false,"mask":"1"}]}]}`, "cannot also be masked"},
		"duplicate column":   {`{"tables":[{"privileges":["SELECT"],"columns":[{"name":"c","mask":"1"},{"name":"C","mask":"2"}]}]}`, "two rules"},
		"nameless column":    {`{"tables":[{"privileges":["SELECT"],"columns":[{"mask":"1"}]}]}`, "name is required"},
		"two statements":     {`{"tables":[{"privileges":["SELECT"],"filter":"true; DROP TABLE x"}]}`, "filter is not one SQL expression"},
		"bad mask lexing":    {`{"tables":[{"privileges":["SELECT"],"columns":[{"name":"c","mask":"'open"}]}]}`, "mask is not one SQL expression"},
		"trailing value":     {`{} {}`, "more than one JSON value"},
		"not JSON":           {`tables: []`, "access rules"},
	} {
		_, err := trinotest.ParseAccessRules([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// Every mistake is reported at once.
	_, err := trinotest.ParseAccessRules([]byte(`{"catalogs":[{"allow":"x"}],"tables":[{"user":"("}]}`))
	if err == nil || strings.Count(err.Error(), "\n") < 2 {
		t.Errorf("want three problems, got %v", err)
	}
	if _, err := trinotest.LoadAccessRules("/nonexistent/rules.json"); err == nil {
		t.Error("missing file accepted")
	}
}

const edgeRules = `{
  "tables": [
    {"user": "alice", "table": "customers", "privileges": []},
    {"user": "alice", "catalog": "sales", "privileges": ["SELECT"]},
    {"user": "erin", "catalog": "sales", "schema": "public", "table": "customers", "privileges": ["SELECT"],
     "filter": "name = current_user OR id = 1"},
    {"user": "erin", "catalog": "sales", "schema": "public", "table": "orders", "privileges": ["OWNERSHIP"]}
  ],
  "impersonation": [{"original_user": "svc", "new_user": "erin"},
                    {"original_user": "svc", "new_user": "alice", "allow": false}]
}`

func TestAccessRulesEnforced(t *testing.T) {
	r, err := trinotest.ParseAccessRules([]byte(edgeRules))
	if err != nil {
		t.Fatal(err)
	}
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithAccessRules(r))
	query := func(user, q string) (string, error) {
		db, err := sql.Open("trino", srv.DSN(user))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return "", err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v any
			if err := rows.Scan(&v); err != nil {
				return "", err
			}
			out = append(out, strings.TrimSpace(strings.ReplaceAll(anyString(v), "\n", " ")))
		}
		return strings.Join(out, ","), rows.Err()
	}
	allow := map[[2]string]string{
		{"alice", "SELECT count(*) FROM orders"}:                                                                       "8",
		{"erin", "SELECT name FROM customers ORDER BY id"}:                                                             "Alice Martin",
		{"erin", "SELECT count(*) FROM sales.public.customers AS c"}:                                                   "1",
		{"erin", "WITH x AS (SELECT id FROM customers) SELECT count(*) FROM x"}:                                        "1",
		{"erin", `SELECT count(*) FROM "sales"."public"."customers"`}:                                                  "1",
		{"erin", "SELECT count(*) FROM orders o LEFT JOIN customers c ON o.customer_id = c.id WHERE c.id IS NOT NULL"}: "2",
		{"erin", "SELECT count(*) FROM (SELECT * FROM customers) t"}:                                                   "1",
		{"erin", "SELECT count(*) FROM (TABLE customers UNION ALL TABLE sales.public.customers) t"}:                    "2",
		{"erin", "SELECT count(*) FROM (TABLE customers) t"}:                                                           "1",
		{"erin", "SHOW TABLES"}: "",
	}
	for k, want := range allow {
		got, err := query(k[0], k[1])
		if err != nil {
			t.Errorf("%s: %q: %v", k[0], k[1], err)
		} else if want != "" && got != want {
			t.Errorf("%s: %q = %q, want %q", k[0], k[1], got, want)
		}
	}
	deny := map[[2]string]string{
		{"alice", "SELECT count(*) FROM customers"}:                               "Cannot select from table sales.public.customers", // first match wins
		{"alice", "SELECT 1 FROM orders JOIN customers ON true"}:                  "Cannot select from table sales.public.customers",
		{"alice", "SELECT count(*) FROM warehouse.inventory.stock s WHERE false"}: "Cannot select from table warehouse.inventory.stock",
		{"carol", "SELECT 1"}:                                              "", // no relation, nothing to check
		{"carol", "SELECT count(*) FROM orders"}:                           "Cannot select from table sales.public.orders",
		{"erin", "SELECT count(*) FROM warehouse.inventory.stock"}:         "Cannot select from table warehouse.inventory.stock",
		{"erin", "SELECT 1 FROM (SELECT 1) t, products"}:                   "Cannot select from table sales.public.products",
		{"erin", "SELECT * FROM range(3)"}:                                 "table function",
		{"erin", "INSERT INTO orders (id) VALUES (1)"}:                     "allow reads only",
		{"erin", "DELETE FROM customers"}:                                  "allow reads only",
		{"erin", "CREATE TABLE sales.public.x AS SELECT * FROM customers"}: "allow reads only",
	}
	for k, want := range deny {
		_, err := query(k[0], k[1])
		if want == "" {
			if err != nil {
				t.Errorf("%s: %q: %v", k[0], k[1], err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "Access Denied") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q: %v, want Access Denied: …%s", k[0], k[1], err, want)
		}
	}
}

func TestAccessRulesImpersonation(t *testing.T) {
	r, err := trinotest.ParseAccessRules([]byte(edgeRules))
	if err != nil {
		t.Fatal(err)
	}
	idp := idptest.New(t, idptest.Options{})
	srv := trinotest.Start(t, trinotest.WithLargeTableRows(-1), trinotest.WithAccessRules(r),
		trinotest.WithJWTAuth(&trinotest.JWTAuth{JWKSURL: idp.URL + "/jwks", Audience: "trino"}))
	c := idp.Claims("trino")
	c["sub"] = "svc"
	tok := idp.Sign(c)
	for user, want := range map[string]string{"erin": "", "alice": "User svc cannot impersonate user alice", "zed": "cannot impersonate user zed"} {
		u, _ := url.Parse(srv.URL())
		u.User = url.User(user)
		cn := connectorURI(t, srv, tok, u.String())
		db := sql.OpenDB(cn)
		var n int
		err := db.QueryRow("SELECT count(*) FROM customers").Scan(&n)
		db.Close()
		switch {
		case want == "" && (err != nil || n != 1):
			t.Errorf("svc as %s: %v %d", user, err, n)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("svc as %s: %v, want %q", user, err, want)
		}
	}
}
