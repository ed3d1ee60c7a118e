package cli

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode"
)

// sqlKeywords are offered by tab completion, with the meta-commands and
// the names of the current catalog's schemas and the current schema's tables.
var sqlKeywords = []string{
	"SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "HAVING", "LIMIT", "OFFSET", "FETCH FIRST", "JOIN", "LEFT JOIN",
	"RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "INNER JOIN", "ON", "USING", "AS", "AND", "OR", "NOT", "IN", "IS NULL",
	"IS NOT NULL", "BETWEEN", "LIKE", "DISTINCT", "UNION", "UNION ALL", "INTERSECT", "EXCEPT", "WITH", "VALUES",
	"CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "TRY_CAST", "COUNT", "SUM", "AVG", "MIN", "MAX", "SHOW CATALOGS",
	"SHOW SCHEMAS", "SHOW TABLES", "SHOW COLUMNS", "DESCRIBE", "EXPLAIN", "USE", "ASC", "DESC", "NULLS FIRST", "NULLS LAST",
}

var metaCommands = []string{`\help`, `\quit`, `\exit`, `\q`, `\history`, `\catalogs`, `\schemas`, `\tables`, `\describe`, `\format`}

// completer completes the word before the cursor. Names are fetched from
// the engine once per catalog/schema, with a short timeout so a slow
// engine never blocks typing for long.
type completer struct {
	sh     *shellState
	cached map[string][]string // "catalog.schema" → names
}

func (c *completer) names() []string {
	key := c.sh.s.catalog + "." + c.sh.s.schema
	if names, ok := c.cached[key]; ok {
		return names
	}
	var names []string
	ctx, cancel := context.WithTimeout(c.sh.a.ctx, 2*time.Second)
	defer cancel()
	if c.sh.s.catalog != "" {
		if schemas, err := c.sh.s.client.Schemas(ctx, c.sh.s.catalog); err == nil {
			names = append(names, schemas...)
		}
		if c.sh.s.schema != "" {
			if tables, err := c.sh.s.client.Tables(ctx, c.sh.s.catalog, c.sh.s.schema, ""); err == nil {
				for _, t := range tables {
					names = append(names, t.Name)
				}
			}
		}
	}
	if cats, err := c.sh.s.client.Catalogs(ctx); err == nil {
		names = append(names, cats...)
	}
	if c.cached == nil {
		c.cached = map[string][]string{}
	}
	c.cached[key] = names
	return names
}

// Complete implements liner's WordCompleter.
func (c *completer) Complete(line string, pos int) (head string, completions []string, tail string) {
	start := pos
	for start > 0 {
		r := rune(line[start-1])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '\\' || r == '.') {
			break
		}
		start--
	}
	head, word, tail := line[:start], line[start:pos], line[pos:]
	if word == "" {
		return head, nil, tail
	}
	var cands []string
	if strings.HasPrefix(word, `\`) {
		cands = metaCommands
	} else {
		// Complete the last part of a dotted name.
		if i := strings.LastIndexByte(word, '.'); i >= 0 {
			head, word = head+word[:i+1], word[i+1:]
			cands = c.names()
		} else {
			cands = append(append([]string{}, sqlKeywords...), c.names()...)
		}
	}
	seen := map[string]bool{}
	for _, cand := range cands {
		if len(cand) >= len(word) && strings.EqualFold(cand[:len(word)], word) && !seen[cand] {
			seen[cand] = true
			// Keywords follow the case the user typed.
			if word == strings.ToLower(word) && cand == strings.ToUpper(cand) {
				cand = strings.ToLower(cand)
			}
			completions = append(completions, cand)
		}
	}
	sort.Strings(completions)
	return head, completions, tail
}
