package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Figure is one estimated quantity; nil is unknown (Trino's NaN), never
// zero.
type Figure = *float64

// TableEstimate is the engine's estimate of what a statement reads from
// one table.
type TableEstimate struct {
	TableRef
	Rows  Figure `json:"rows"`  // estimated rows read; null when unknown
	Bytes Figure `json:"bytes"` // estimated bytes read; null when unknown
}

// Estimate is the engine's estimate of a statement's input: per table and
// in total (unknown when any table's is).
type Estimate struct {
	Tables []TableEstimate `json:"tables"`
	Rows   Figure          `json:"rows"`
	Bytes  Figure          `json:"bytes"`
	Source string          `json:"source"`
}

// estNum reads a Trino estimate: a number, or "NaN"/"Infinity" (Jackson
// writes non-finite doubles as strings), which is unknown.
type estNum struct{ v Figure }

func (n *estNum) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		n.v = nil
		return nil
	}
	n.v = &f
	return nil
}

// parseEstimate reads the estimates of Trino's EXPLAIN (TYPE IO, FORMAT
// JSON) document: inputTableColumnInfos[].estimate.outputRowCount and
// outputSizeInBytes.
func parseEstimate(plan string) *Estimate {
	var doc struct {
		Inputs []struct {
			Table *struct {
				Catalog     string `json:"catalog"`
				SchemaTable *struct {
					Schema string `json:"schema"`
					Table  string `json:"table"`
				} `json:"schemaTable"`
			} `json:"table"`
			Estimate *struct {
				Rows  estNum `json:"outputRowCount"`
				Bytes estNum `json:"outputSizeInBytes"`
			} `json:"estimate"`
		} `json:"inputTableColumnInfos"`
	}
	est := &Estimate{Tables: []TableEstimate{}, Source: "EXPLAIN (TYPE IO, FORMAT JSON)"}
	if err := json.NewDecoder(strings.NewReader(plan)).Decode(&doc); err != nil {
		return est
	}
	var rows, bytes float64
	rowsKnown, bytesKnown := true, true
	for _, in := range doc.Inputs {
		var te TableEstimate
		if in.Table != nil && in.Table.SchemaTable != nil {
			te.TableRef = TableRef{Catalog: in.Table.Catalog, Schema: in.Table.SchemaTable.Schema, Table: in.Table.SchemaTable.Table}
		}
		if in.Estimate != nil {
			te.Rows, te.Bytes = in.Estimate.Rows.v, in.Estimate.Bytes.v
		}
		if te.Rows == nil {
			rowsKnown = false
		} else {
			rows += *te.Rows
		}
		if te.Bytes == nil {
			bytesKnown = false
		} else {
			bytes += *te.Bytes
		}
		est.Tables = append(est.Tables, te)
	}
	if rowsKnown {
		est.Rows = &rows
	}
	if bytesKnown {
		est.Bytes = &bytes
	}
	return est
}

// Estimate asks the engine to plan q (EXPLAIN (TYPE IO, FORMAT JSON);
// nothing is executed) and returns its input estimate.
func (c *Client) Estimate(ctx context.Context, q Query) (*Estimate, error) {
	plan, err := c.Explain(ctx, q, "IO", "JSON")
	if err != nil {
		return nil, err
	}
	return parseEstimate(plan), nil
}
