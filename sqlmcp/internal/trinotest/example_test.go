package trinotest_test

import (
	"database/sql"
	"fmt"

	_ "github.com/trinodb/trino-go-client/trino"

	"github.com/mcpfleet/mcpfleet/sqlmcp/internal/trinotest"
)

// The engine outside a test: start it, point trino-go-client at DSN, look
// at what it received.
func ExampleNew() {
	srv, err := trinotest.New(trinotest.Options{LargeTableRows: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	db, err := sql.Open("trino", srv.DSN("alice")+"&source=example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	var name, total string
	err = db.QueryRow("SELECT c.name, CAST(t.total_amount AS VARCHAR) FROM customers c JOIN order_totals t ON t.customer_id = c.id ORDER BY c.id LIMIT 1").Scan(&name, &total)
	if err != nil {
		fmt.Println(err)
		return
	}
	post := srv.Statements()[0]
	fmt.Println(name, total, post.Header.Get("X-Trino-User"), post.Header.Get("X-Trino-Source"))
	// Output: Alice Martin 112.29 alice example
}
