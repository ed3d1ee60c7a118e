package trinotest

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// trinoError is the "error" object of a failed QueryResults page.
type trinoError struct {
	Message       string         `json:"message"`
	SQLState      string         `json:"sqlState,omitempty"`
	ErrorCode     int            `json:"errorCode"`
	ErrorName     string         `json:"errorName"`
	ErrorType     string         `json:"errorType"`
	ErrorLocation *errorLocation `json:"errorLocation,omitempty"`
	FailureInfo   failureInfo    `json:"failureInfo"`
}

type errorLocation struct {
	LineNumber   int `json:"lineNumber"`
	ColumnNumber int `json:"columnNumber"`
}

type failureInfo struct {
	Type          string         `json:"type"`
	Message       string         `json:"message"`
	Suppressed    []any          `json:"suppressed"`
	Stack         []string       `json:"stack"`
	ErrorLocation *errorLocation `json:"errorLocation,omitempty"`
}

func (e *trinoError) Error() string { return e.ErrorType + ": " + e.Message }

// Trino's StandardErrorCode values used by the engine (name → code, type).
var errorCodes = map[string]struct {
	code int
	typ  string
}{
	"GENERIC_USER_ERROR":           {0, "USER_ERROR"},
	"SYNTAX_ERROR":                 {1, "USER_ERROR"},
	"ABANDONED_QUERY":              {2, "USER_ERROR"},
	"USER_CANCELED":                {3, "USER_ERROR"},
	"PERMISSION_DENIED":            {4, "USER_ERROR"},
	"NOT_FOUND":                    {5, "USER_ERROR"},
	"FUNCTION_NOT_FOUND":           {6, "USER_ERROR"},
	"INVALID_FUNCTION_ARGUMENT":    {7, "USER_ERROR"},
	"DIVISION_BY_ZERO":             {8, "USER_ERROR"},
	"INVALID_CAST_ARGUMENT":        {9, "USER_ERROR"},
	"ALREADY_EXISTS":               {12, "USER_ERROR"},
	"NOT_SUPPORTED":                {13, "USER_ERROR"},
	"CONSTRAINT_VIOLATION":         {16, "USER_ERROR"},
	"NUMERIC_VALUE_OUT_OF_RANGE":   {19, "USER_ERROR"},
	"UNKNOWN_TRANSACTION":          {20, "USER_ERROR"},
	"NOT_IN_TRANSACTION":           {21, "USER_ERROR"},
	"TRANSACTION_ALREADY_ABORTED":  {22, "USER_ERROR"},
	"READ_ONLY_VIOLATION":          {23, "USER_ERROR"},
	"TYPE_NOT_FOUND":               {43, "USER_ERROR"},
	"CATALOG_NOT_FOUND":            {44, "USER_ERROR"},
	"SCHEMA_NOT_FOUND":             {45, "USER_ERROR"},
	"TABLE_NOT_FOUND":              {46, "USER_ERROR"},
	"COLUMN_NOT_FOUND":             {47, "USER_ERROR"},
	"MISSING_CATALOG_NAME":         {56, "USER_ERROR"},
	"MISSING_SCHEMA_NAME":          {57, "USER_ERROR"},
	"TYPE_MISMATCH":                {58, "USER_ERROR"},
	"GENERIC_INTERNAL_ERROR":       {65536, "INTERNAL_ERROR"},
	"INVALID_SESSION_PROPERTY":     {26, "USER_ERROR"},
	"EXCEEDED_GLOBAL_MEMORY_LIMIT": {131073, "INSUFFICIENT_RESOURCES"},
	"EXCEEDED_TIME_LIMIT":          {131075, "INSUFFICIENT_RESOURCES"},
}

// newError builds a Trino error. line is 0 when there is no location.
func newError(name, message string, line, col int) *trinoError {
	c, ok := errorCodes[name]
	if !ok {
		c = errorCodes["GENERIC_USER_ERROR"]
	}
	e := &trinoError{ErrorCode: c.code, ErrorName: name, ErrorType: c.typ}
	if line > 0 {
		e.ErrorLocation = &errorLocation{LineNumber: line, ColumnNumber: col}
		message = "line " + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ": " + message
	}
	e.Message = message
	e.FailureInfo = failureInfo{Type: "io.trino.spi.TrinoException", Message: message, Suppressed: []any{}, Stack: []string{}, ErrorLocation: e.ErrorLocation}
	return e
}

var (
	reTableMissing  = regexp.MustCompile(`Table with name "?([^" ]+)"? does not exist`)
	reSchemaMissing = regexp.MustCompile(`schema "([^"]+)" does not exist|Schema with name "?([^" ]+)"? does not exist`)
	reCatalogMiss   = regexp.MustCompile(`Catalog "([^"]+)" does not exist`)
	reColumnMissing = regexp.MustCompile(`Referenced column "([^"]+)" not found`)
	reFuncMissing   = regexp.MustCompile(`Function with name "?([^" ]+)"? does not exist`)
)

// fromDuckDB converts a DuckDB error into the Trino error a client would see
// for the same mistake: TABLE_NOT_FOUND, COLUMN_NOT_FOUND, SYNTAX_ERROR, ...
// The DuckDB wording is kept in the message after Trino's prefix, and the
// location comes from DuckDB's "LINE n:" caret when present.
func fromDuckDB(sqlText string, err error, ctx context.Context) *trinoError {
	var te *trinoError
	if errors.As(err, &te) {
		return te
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return newError("EXCEEDED_TIME_LIMIT", "Query exceeded the maximum execution time", 0, 0)
		}
		return newError("USER_CANCELED", "Query was canceled", 0, 0)
	}
	msg := err.Error()
	var derr *duckdb.Error
	kind := duckdb.ErrorTypeInvalid
	if errors.As(err, &derr) {
		kind = derr.Type
		msg = derr.Msg
	}
	line, col := duckLocation(sqlText, msg)
	first, _, _ := strings.Cut(msg, "\n")
	// Drop DuckDB's "Catalog Error: " style prefix; Trino's errorName says it.
	if i := strings.Index(first, " Error: "); i >= 0 && i < 30 {
		first = first[i+len(" Error: "):]
	}
	first = strings.TrimSuffix(first, "!")
	name := "GENERIC_USER_ERROR"
	switch {
	case kind == duckdb.ErrorTypeOutOfMemory || strings.Contains(msg, "Out of Memory"):
		// DuckDB's memory_limit is set from query_max_memory (see runDuck).
		name, first = "EXCEEDED_GLOBAL_MEMORY_LIMIT", "Query exceeded distributed user memory limit ("+first+")"
	case kind == duckdb.ErrorTypeInterrupt || strings.Contains(msg, "INTERRUPT"):
		name, first = "USER_CANCELED", "Query was canceled"
	case kind == duckdb.ErrorTypeParser || kind == duckdb.ErrorTypeSyntax:
		name = "SYNTAX_ERROR"
	case reTableMissing.MatchString(first) && !strings.Contains(first, "because schema"):
		name = "TABLE_NOT_FOUND"
		first = "Table '" + reTableMissing.FindStringSubmatch(first)[1] + "' does not exist"
	case reSchemaMissing.MatchString(first):
		name = "SCHEMA_NOT_FOUND"
		m := reSchemaMissing.FindStringSubmatch(first)
		first = "Schema '" + m[1] + m[2] + "' does not exist"
	case reCatalogMiss.MatchString(first):
		name = "CATALOG_NOT_FOUND"
		first = "Catalog '" + reCatalogMiss.FindStringSubmatch(first)[1] + "' not found"
	case reColumnMissing.MatchString(first):
		name = "COLUMN_NOT_FOUND"
		first = "Column '" + reColumnMissing.FindStringSubmatch(first)[1] + "' cannot be resolved"
	case reFuncMissing.MatchString(first):
		name = "FUNCTION_NOT_FOUND"
		first = "Function '" + reFuncMissing.FindStringSubmatch(first)[1] + "' not registered"
	case kind == duckdb.ErrorTypePermission:
		name = "PERMISSION_DENIED"
	case kind == duckdb.ErrorTypeConversion:
		name = "INVALID_CAST_ARGUMENT"
	case kind == duckdb.ErrorTypeDivideByZero:
		name = "DIVISION_BY_ZERO"
	case kind == duckdb.ErrorTypeOutOfRange:
		name = "NUMERIC_VALUE_OUT_OF_RANGE"
	case kind == duckdb.ErrorTypeConstraint:
		name = "CONSTRAINT_VIOLATION"
	case kind == duckdb.ErrorTypeMismatchType:
		name = "TYPE_MISMATCH"
	case kind == duckdb.ErrorTypeNotImplemented:
		name = "NOT_SUPPORTED"
	case kind == duckdb.ErrorTypeCatalog && strings.Contains(first, "already exists"):
		name = "ALREADY_EXISTS"
	case kind == duckdb.ErrorTypeTransaction:
		name = "TRANSACTION_ALREADY_ABORTED"
	case kind == duckdb.ErrorTypeInternal || kind == duckdb.ErrorTypeFatal:
		name = "GENERIC_INTERNAL_ERROR"
	}
	if line == 0 && name != "USER_CANCELED" && name != "GENERIC_INTERNAL_ERROR" {
		line, col = 1, 1
	}
	return newError(name, first, line, col)
}

// duckLocation finds DuckDB's "LINE n: <text>" plus caret line and turns it
// into a line and column of sqlText.
func duckLocation(sqlText, msg string) (int, int) {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		rest, ok := strings.CutPrefix(l, "LINE ")
		if !ok || i+1 >= len(lines) {
			continue
		}
		num, text, ok := strings.Cut(rest, ": ")
		if !ok {
			continue
		}
		n := 0
		for _, c := range num {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int(c-'0')
		}
		if n <= 0 {
			continue
		}
		caret := strings.Index(lines[i+1], "^")
		if caret < 0 {
			return n, 1
		}
		col := caret - len("LINE ") - len(num) - 2 + 1
		// DuckDB may elide the start of long lines with "...".
		if strings.HasPrefix(text, "...") {
			srcLines := strings.Split(sqlText, "\n")
			if n-1 < len(srcLines) {
				if j := strings.Index(srcLines[n-1], strings.TrimPrefix(text, "...")); j >= 0 {
					col = j + col - 3
				}
			}
		}
		if col < 1 {
			col = 1
		}
		return n, col
	}
	return 0, 0
}
