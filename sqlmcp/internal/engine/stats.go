package engine

import (
	"encoding/json"
	"io"
)

// engineStats is the coordinator's own account of a query: the protocol's
// stats object of the last answer it sent for it (POST /v1/statement or a
// nextUri page, the FAILED page of a failed query included). Trino's
// client protocol has no planning time: queued, elapsed, CPU and wall time
// only.
type engineStats struct {
	State             string `json:"state"`
	QueuedTimeMillis  int64  `json:"queuedTimeMillis"`
	ElapsedTimeMillis int64  `json:"elapsedTimeMillis"`
	CPUTimeMillis     int64  `json:"cpuTimeMillis"`
	ProcessedRows     int64  `json:"processedRows"`
}

// executionMillis is the time from leaving the queue to the last answer:
// planning and running (elapsed minus queued; never below zero).
func (st engineStats) executionMillis() int64 {
	return max(st.ElapsedTimeMillis-st.QueuedTimeMillis, 0)
}

// maxStatsBytes bounds the stats object kept from one answer. Trino's
// stats carry the root stage and its sub-stages, a few kB even for a large
// plan; a bigger one is not kept (the query's previous stats stay).
const maxStatsBytes = 256 << 10

// topScanner follows one statement answer (a JSON object) as the driver
// reads it and keeps its top-level "id" and "stats" values, so that the
// engine's stats are known without decoding the answer a second time: the
// pages carry the rows before the stats, and the driver keeps the stats to
// itself (its progress callback is asynchronous, may drop a report, and
// never sees a failed query's last answer).
//
// It only tracks nesting and strings; anything that is not a JSON object
// simply never completes.
type topScanner struct {
	depth     int
	inStr     bool
	esc       bool
	expectKey bool // at depth 1, the next string is a key
	bad       bool // not a JSON object: stop looking

	// The string being read, when it is a key or the value of "id".
	collect  bool
	isKey    bool
	str      [64]byte
	strLen   int // may exceed len(str): too long to be a key or id we want
	key      string
	capStats bool // inside the value of "stats"

	id       string
	stats    []byte
	complete bool // the top-level object closed
}

// feed scans the next bytes of the answer.
func (s *topScanner) feed(p []byte) {
	if s.complete || s.bad {
		return
	}
	from := -1 // where the stats capture starts in p
	if s.capStats {
		from = 0
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				// An escaped key or id is none Trino sends: not kept.
				s.esc, s.strLen = true, len(s.str)+1
			case c == '"':
				s.inStr = false
				s.endStr()
			default:
				// Plain characters in bulk: row data is mostly strings.
				k := i + 1
				for k < len(p) && p[k] != '"' && p[k] != '\\' {
					k++
				}
				s.addStr(p[i:k])
				i = k - 1
			}
			continue
		}
		if s.depth >= 2 {
			// Inside a value (the rows): only nesting and strings matter.
			for c != '"' && c != '{' && c != '}' && c != '[' && c != ']' {
				if i++; i == len(p) {
					break
				}
				c = p[i]
			}
			if i == len(p) {
				break
			}
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && (s.expectKey || s.key == "id") {
				s.collect, s.isKey, s.strLen = true, s.expectKey, 0
			}
		case '{', '[':
			if s.depth == 0 && c != '{' {
				s.bad = true
				return
			}
			if s.depth == 1 && !s.expectKey && s.key == "stats" && c == '{' {
				s.capStats, s.stats, from = true, s.stats[:0], i
			}
			s.depth++
			if s.depth == 1 {
				s.expectKey = true
			}
		case '}', ']':
			s.depth--
			if s.depth == 1 && s.capStats {
				s.capStats = false
				if len(s.stats)+i+1-from <= maxStatsBytes {
					s.stats = append(s.stats, p[from:i+1]...)
				} else {
					s.stats = nil
				}
				from = -1
			}
			if s.depth <= 0 {
				s.complete = s.depth == 0
				s.bad = s.depth < 0
				return
			}
		case ',':
			if s.depth == 1 {
				s.expectKey, s.key = true, ""
			}
		case ' ', '\t', '\r', '\n', ':':
		default:
			if s.depth == 0 {
				s.bad = true
				return
			}
		}
	}
	if s.capStats {
		if len(s.stats)+len(p)-from <= maxStatsBytes {
			s.stats = append(s.stats, p[from:]...)
		} else {
			s.capStats, s.stats = false, nil
		}
	}
}

func (s *topScanner) addStr(b []byte) {
	if !s.collect {
		return
	}
	if s.strLen+len(b) <= len(s.str) {
		copy(s.str[s.strLen:], b)
	}
	s.strLen += len(b)
}

func (s *topScanner) endStr() {
	if !s.collect {
		return
	}
	s.collect = false
	v := ""
	if s.strLen <= len(s.str) {
		v = string(s.str[:s.strLen])
	}
	if s.isKey {
		s.key, s.expectKey = v, false
		return
	}
	s.id = v // the value of "id"
}

// statsBody is a page's body as the driver reads it: it hands the answer's
// id and stats to done once the answer's object has been read, before the
// driver's decoder returns.
type statsBody struct {
	io.ReadCloser
	s     topScanner
	done  func(id string, stats []byte)
	fired bool
}

func (b *statsBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.fired {
		b.s.feed(p[:n])
		if b.s.complete {
			b.fired = true
			b.done(b.s.id, b.s.stats)
		}
	}
	return n, err
}

// setStats keeps stats when they are the query's: the answers of a read-only
// transaction's START TRANSACTION and ROLLBACK pass through the same
// options and must not count.
func (o *requestOptions) setStats(id string, raw []byte) {
	if id == "" || len(raw) == 0 {
		return
	}
	var st engineStats
	if json.Unmarshal(raw, &st) != nil {
		return
	}
	o.mu.Lock()
	if id == o.queryID {
		o.stats, o.hasStats = st, true
	}
	o.mu.Unlock()
}

// lastStats returns the query's last stats, if the engine sent any.
func (o *requestOptions) lastStats() (engineStats, bool) {
	if o == nil {
		return engineStats{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stats, o.hasStats
}
