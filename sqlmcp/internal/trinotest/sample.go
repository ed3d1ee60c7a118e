package trinotest

import (
	"context"
	"database/sql"
	"fmt"
)

// sampleData creates the data set documented in the package comment. Every
// name is fully qualified; catalogs come from createCatalog.
var sampleData = []string{
	// sales.public (the schema itself always exists, see loadSampleData)
	`CREATE TABLE sales.public.customers (
		id INTEGER NOT NULL,
		name VARCHAR NOT NULL,
		email VARCHAR,
		country VARCHAR,
		signup_date DATE,
		vip BOOLEAN,
		balance DECIMAL(12,2)
	)`,
	`COMMENT ON TABLE sales.public.customers IS 'People who bought something'`,
	`COMMENT ON COLUMN sales.public.customers.email IS 'Contact address; NULL when unknown'`,
	`INSERT INTO sales.public.customers VALUES
		(1, 'Alice Martin', 'alice@example.com', 'FR', DATE '2021-03-04', true, 1250.50),
		(2, 'Bob Stone', 'bob@example.com', 'US', DATE '2022-07-19', false, 0.00),
		(3, 'Chloé Dubois', NULL, 'FR', DATE '2023-01-02', NULL, 99.99),
		(4, 'Dan O''Hara', 'dan@example.com', NULL, NULL, false, NULL),
		(5, '山田 太郎', 'taro@example.jp', 'JP', DATE '2024-02-29', true, 12345678.90)`,
	`CREATE TABLE sales.public.orders (
		id BIGINT NOT NULL,
		customer_id INTEGER,
		ordered_at TIMESTAMP_MS,
		amount DECIMAL(10,2),
		status VARCHAR,
		discount DOUBLE
	)`,
	`INSERT INTO sales.public.orders VALUES
		(100, 1, TIMESTAMP '2024-01-02 03:04:05.678', 12.30, 'shipped', 0.1),
		(101, 1, TIMESTAMP '2024-01-05 10:00:00', 99.99, 'delivered', NULL),
		(102, 2, TIMESTAMP '2024-02-10 12:30:00.5', 5.00, 'cancelled', 0),
		(103, 3, TIMESTAMP '2024-03-15 08:15:00', 250.00, 'shipped', 0.25),
		(104, 5, TIMESTAMP '2024-03-16 23:59:59.999', 1000.01, 'pending', NULL),
		(105, NULL, NULL, NULL, NULL, NULL),
		(106, 4, TIMESTAMP '2024-04-01 00:00:00', 42.42, 'delivered', 0.05),
		(107, 2, TIMESTAMP '2024-04-02 14:00:00', 7.77, 'shipped', 0)`,
	`CREATE VIEW sales.public.order_totals AS
		SELECT customer_id, count(*) AS order_count, sum(amount) AS total_amount
		FROM sales.public.orders GROUP BY customer_id`,
	`CREATE TABLE sales.public.all_types (
		id INTEGER,
		c_boolean BOOLEAN,
		c_tinyint TINYINT,
		c_smallint SMALLINT,
		c_integer INTEGER,
		c_bigint BIGINT,
		c_real REAL,
		c_double DOUBLE,
		c_decimal DECIMAL(10,2),
		c_decimal_wide DECIMAL(38,9),
		c_varchar VARCHAR,
		c_varbinary BLOB,
		c_date DATE,
		c_time TIME,
		c_timestamp TIMESTAMP_MS,
		c_timestamp_us TIMESTAMP,
		c_timestamptz TIMESTAMPTZ,
		c_uuid UUID,
		c_json JSON,
		c_array INTEGER[],
		c_array_varchar VARCHAR[],
		c_map MAP(VARCHAR, INTEGER),
		c_row STRUCT(name VARCHAR, score DOUBLE)
	)`,
	`INSERT INTO sales.public.all_types VALUES
		(1, true, 1, 2, 3, 4, 1.5, 2.25, 12.30, 12345678901234567890.123456789, 'hello', '\xDE\xAD\xBE\xEF'::BLOB,
		 DATE '2024-01-02', TIME '03:04:05.678', TIMESTAMP '2024-01-02 03:04:05.678', TIMESTAMP '2024-01-02 03:04:05.678901',
		 TIMESTAMPTZ '2024-01-02 03:04:05.678+00', '6ba7b810-9dad-11d1-80b4-00c04fd430c8', '{"a": [1, 2]}',
		 [1, 2, 3], ['x', NULL, 'z'], MAP {'one': 1, 'two': 2}, {'name': 'n', 'score': 0.5}),
		(2, false, -128, -32768, -2147483648, -9223372036854775808, -0.5, -1e300, -0.01, -1.000000001, '', ''::BLOB,
		 DATE '1970-01-01', TIME '00:00:00', TIMESTAMP '1970-01-01 00:00:00', TIMESTAMP '1970-01-01 00:00:00',
		 TIMESTAMPTZ '1970-01-01 00:00:00+00', '00000000-0000-0000-0000-000000000000', '[]',
		 [], [], MAP {}, {'name': NULL, 'score': NULL}),
		(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,

	// sales.crm
	`CREATE SCHEMA sales.crm`,
	`CREATE TABLE sales.crm.contacts (id INTEGER, full_name VARCHAR, phone VARCHAR, notes VARCHAR)`,
	`INSERT INTO sales.crm.contacts VALUES
		(1, 'Alice Martin', '+33 1 23 45 67 89', NULL),
		(2, 'Bob Stone', NULL, 'prefers email'),
		(3, 'Eve', '+1 555 0100', 'said: ''no calls''')`,

	// sales."Odd Schema": names that need quoting.
	`CREATE SCHEMA sales."Odd Schema"`,
	`CREATE TABLE sales."Odd Schema"."Mixed Case Table" ("Column One" VARCHAR, "select" INTEGER, "we""ird" VARCHAR)`,
	`INSERT INTO sales."Odd Schema"."Mixed Case Table" VALUES ('a', 1, 'q"uote'), ('b', 2, NULL)`,
	`CREATE TABLE sales."Odd Schema"."dotted.name" (id INTEGER)`,
	`INSERT INTO sales."Odd Schema"."dotted.name" VALUES (1), (2)`,
	`CREATE TABLE sales."Odd Schema"."quote""d" (id INTEGER)`,
	`INSERT INTO sales."Odd Schema"."quote""d" VALUES (7)`,

	// warehouse.inventory
	`CREATE SCHEMA warehouse.inventory`,
	`CREATE TABLE warehouse.inventory.products (
		sku VARCHAR NOT NULL,
		name VARCHAR,
		price DECIMAL(10,2),
		tags VARCHAR[],
		attributes MAP(VARCHAR, VARCHAR),
		dims STRUCT(width DOUBLE, height DOUBLE)
	)`,
	`INSERT INTO warehouse.inventory.products VALUES
		('SKU-1', 'Desk', 199.00, ['furniture', 'office'], MAP {'color': 'oak'}, {'width': 120.0, 'height': 75.0}),
		('SKU-2', 'Lamp', 25.50, ['lighting'], MAP {}, {'width': 15.0, 'height': 40.5}),
		('SKU-3', 'Cable', NULL, NULL, NULL, NULL)`,
	`CREATE TABLE warehouse.inventory.stock (sku VARCHAR, warehouse VARCHAR, qty INTEGER, updated_at TIMESTAMP_MS)`,
	`INSERT INTO warehouse.inventory.stock VALUES
		('SKU-1', 'paris', 10, TIMESTAMP '2024-05-01 09:00:00'),
		('SKU-1', 'lyon', 0, TIMESTAMP '2024-05-02 09:00:00'),
		('SKU-2', 'paris', 150, NULL)`,
	`CREATE VIEW warehouse.inventory.stock_by_product AS
		SELECT p.sku, p.name, sum(s.qty) AS total_qty
		FROM warehouse.inventory.products p LEFT JOIN warehouse.inventory.stock s ON s.sku = p.sku
		GROUP BY p.sku, p.name`,

	// warehouse.logs: the large table is filled by loadSampleData.
	`CREATE SCHEMA warehouse.logs`,
	`CREATE TABLE warehouse.logs.events (
		id BIGINT NOT NULL,
		ts TIMESTAMP_MS,
		level VARCHAR,
		message VARCHAR,
		value DOUBLE
	)`,
}

// loadSampleData creates the catalogs and, unless disabled, the sample
// data set, then closes DuckDB's access to files and settings so SQL sent to
// the engine cannot reach the machine (no read_csv('/etc/passwd')).
func loadSampleData(ctx context.Context, db *sql.DB, opts Options) error {
	for _, c := range []string{"sales", "warehouse"} {
		if err := createCatalog(ctx, db, c); err != nil {
			return err
		}
	}
	// DSN's default schema exists even without the sample data.
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+DefaultCatalog+"."+DefaultSchema); err != nil {
		return fmt.Errorf("create %s.%s: %w", DefaultCatalog, DefaultSchema, err)
	}
	if !opts.NoSampleData {
		for _, st := range sampleData {
			if _, err := db.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("%w in %.80s", err, st)
			}
		}
		if opts.LargeTableRows > 0 {
			st := fmt.Sprintf(`INSERT INTO warehouse.logs.events
				SELECT i, TIMESTAMP '2024-01-01 00:00:00' + to_milliseconds(i * 1000),
				       CASE i %% 10 WHEN 0 THEN 'ERROR' WHEN 1 THEN 'WARN' ELSE 'INFO' END,
				       'event ' || i, (i %% 1000) / 10.0
				FROM range(1, %d) t(i)`, opts.LargeTableRows+1)
			if _, err := db.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("generate %s: %w", LargeTable, err)
			}
		}
	}
	// Keep SQL sent to the engine away from the machine's files.
	if _, err := db.ExecContext(ctx, "SET enable_external_access = false"); err != nil {
		return fmt.Errorf("disable external access: %w", err)
	}
	return nil
}
