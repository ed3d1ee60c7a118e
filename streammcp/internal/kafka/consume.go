package kafka

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/mcpfleet/mcpfleet/shared/errkind"
)

// Why a scan stopped before the end of what it reads.
const (
	StoppedByMaxMessages = "max_messages"
	StoppedByMaxBytes    = "max_bytes"
)

// TimeConsumeRequest reads a topic from a time: every partition (or the
// given ones) from its first offset at or after From, merged by timestamp.
type TimeConsumeRequest struct {
	Topic      string
	Partitions []int32 // nil: every partition of the topic
	From       time.Time
	Key        []byte // non-nil: return only messages with exactly this key
	MaxCount   int    // messages returned
	MaxBytes   int32  // key+value bytes scanned (returned or not)
}

// PartitionCursor is where a time read started and stopped on one
// partition.
type PartitionCursor struct {
	Partition int32 `json:"partition"`
	// StartOffset is the first offset at or after from_datetime; null when
	// every message is older (nothing to read there).
	StartOffset *int64 `json:"start_offset"`
	// NextOffset is the first offset not scanned: where to resume.
	NextOffset int64 `json:"next_offset"`
	LogEnd     int64 `json:"log_end_offset"`
}

// TimeConsumeResult is consume_messages' answer to from_datetime.
type TimeConsumeResult struct {
	Topic        string            `json:"topic"`
	FromDatetime string            `json:"from_datetime"`
	Partitions   []PartitionCursor `json:"partitions"`
	Messages     []Message         `json:"messages"`
	// Scanned counts every message read from Kafka and examined, returned or
	// not (with key, the non-matching ones too); ScannedBytes their
	// key+value bytes, which max_bytes bounds.
	Scanned      int   `json:"scanned_messages"`
	ScannedBytes int64 `json:"scanned_bytes"`
	// Truncated: the scan stopped at a bound (StoppedBy names it) before the
	// log end of every partition; next_offset per partition resumes it.
	Truncated bool   `json:"truncated"`
	StoppedBy string `json:"stopped_by"` // "", max_messages or max_bytes
}

type cursor struct {
	k       tp
	leader  int32
	next    int64
	end     int64
	buf     []decoded
	stalled bool
}

// ConsumeFromTime reads from r.From with plain Fetch requests (no consumer
// group, no commits): 1 Metadata, then per leader broker 1 ListOffsets by
// time and 1 for the log end, then Fetch rounds of one request per leader
// for all the partitions it leads whose buffered messages ran out. The
// merge returns the message with the earliest timestamp among the
// partitions' next ones (ties: lower partition), each partition in offset
// order, until max_messages are returned or max_bytes are scanned.
func (c *Client) ConsumeFromTime(ctx context.Context, r TimeConsumeRequest) (*TimeConsumeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, []string{r.Topic})
	if err != nil {
		return nil, err
	}
	parts, err := topicPartitions(md, []string{r.Topic}, r.Partitions)
	if err != nil {
		return nil, err
	}
	set := map[tp]bool{}
	for _, k := range parts {
		set[k] = true
	}
	type answer struct {
		offs map[tp]int64
		errs map[tp]string
	}
	atCh := make(chan answer, 1)
	go func() {
		o, e := c.offsetsAt(ctx, md, set, r.From.UnixMilli())
		atCh <- answer{o, e}
	}()
	ends, eerrs := c.offsetsAt(ctx, md, set, sarama.OffsetNewest)
	at := <-atCh
	if err := firstPartitionError("look up offsets by time", at.errs, eerrs); err != nil {
		return nil, err
	}
	leader := map[tp]int32{}
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			leader[tp{t.Name, p.ID}] = p.Leader
		}
	}
	res := &TimeConsumeResult{Topic: r.Topic, FromDatetime: r.From.UTC().Format(time.RFC3339Nano), Messages: []Message{}, Partitions: []PartitionCursor{}}
	curs := make([]*cursor, 0, len(parts))
	for _, k := range parts {
		cu := &cursor{k: k, leader: leader[k], end: ends[k], next: ends[k]}
		if off := at.offs[k]; off >= 0 {
			cu.next = off
		}
		curs = append(curs, cu)
	}
	addrs := brokerAddrs(md)
	var used int64
	for {
		// A partition whose buffer ran out must be read before the merge
		// can tell which message comes next.
		var need []*cursor
		for _, cu := range curs {
			if !cu.stalled && len(cu.buf) == 0 && cu.next < cu.end {
				need = append(need, cu)
			}
		}
		if len(need) > 0 {
			if err := c.fetchRound(ctx, addrs, r, need); err != nil {
				return nil, err
			}
			continue
		}
		var best *cursor
		for _, cu := range curs {
			if len(cu.buf) == 0 {
				continue
			}
			if best == nil || cu.buf[0].ts.Before(best.buf[0].ts) {
				best = cu
			}
		}
		if best == nil {
			break
		}
		if len(res.Messages) >= r.MaxCount {
			res.Truncated, res.StoppedBy = true, StoppedByMaxMessages
			break
		}
		if used >= int64(r.MaxBytes) {
			res.Truncated, res.StoppedBy = true, StoppedByMaxBytes
			break
		}
		m := best.buf[0]
		best.buf = best.buf[1:]
		best.next = m.Offset + 1
		used += int64(m.size)
		res.Scanned++
		if r.Key == nil || m.rawKey != nil && bytes.Equal(m.rawKey, r.Key) {
			m.Partition = best.k.part
			res.Messages = append(res.Messages, m.Message)
		}
	}
	res.ScannedBytes = used
	for _, cu := range curs {
		pc := PartitionCursor{Partition: cu.k.part, NextOffset: cu.next, LogEnd: cu.end}
		if off := at.offs[cu.k]; off >= 0 {
			pc.StartOffset = ptr(off)
		}
		res.Partitions = append(res.Partitions, pc)
	}
	sort.Slice(res.Partitions, func(i, j int) bool { return res.Partitions[i].Partition < res.Partitions[j].Partition })
	return res, nil
}

// fetchRound sends one Fetch per leader for the cursors in need, in
// parallel, and buffers what comes back. A partition that answers nothing
// while behind its log end (e.g. only aborted or control records left) is
// marked stalled rather than asked forever.
func (c *Client) fetchRound(ctx context.Context, addrs map[int32]string, r TimeConsumeRequest, need []*cursor) error {
	byLeader := map[int32][]*cursor{}
	for _, cu := range need {
		byLeader[cu.leader] = append(byLeader[cu.leader], cu)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for l, cs := range byLeader {
		addr := addrs[l]
		if addr == "" {
			return errkind.New(errkind.Unavailable, fmt.Sprintf("read %s/%d", r.Topic, cs[0].k.part), fmt.Errorf("the partition has no live leader"), "retry after the partition is back online")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &sarama.FetchRequest{Version: fetchVersion(c.conf.Version), MaxWaitTime: 100, MinBytes: 1, MaxBytes: r.MaxBytes, Isolation: sarama.ReadUncommitted}
			for _, cu := range cs {
				req.AddBlock(r.Topic, cu.k.part, cu.next, r.MaxBytes, -1)
			}
			resp, err := call(ctx, c, addr, APIFetch, fmt.Sprintf("fetch %d partition(s) of %s from broker %d", len(cs), r.Topic, l), func(b *sarama.Broker) (*sarama.FetchResponse, error) {
				return b.Fetch(req)
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				first = cmpErr(first, err)
				return
			}
			for _, cu := range cs {
				blk := resp.GetBlock(r.Topic, cu.k.part)
				if blk == nil {
					continue // not answered this round (response size): asked again
				}
				if blk.Err != sarama.ErrNoError {
					first = cmpErr(first, errkind.New(kerrKind(blk.Err), fmt.Sprintf("fetch %s/%d at offset %d", r.Topic, cu.k.part, cu.next), fmt.Errorf("%s: %w", ErrorName(blk.Err), blk.Err), ""))
					continue
				}
				for _, recs := range blk.RecordsSet {
					for _, m := range decodeRecords(recs) {
						if m.Offset >= cu.next && m.Offset < cu.end {
							cu.buf = append(cu.buf, m)
						}
					}
				}
				if len(cu.buf) == 0 && len(blk.RecordsSet) > 0 {
					cu.stalled = true
				}
			}
		}()
	}
	wg.Wait()
	// A round where no partition in need got anything must not repeat.
	progressed := false
	for _, cu := range need {
		if len(cu.buf) > 0 {
			progressed = true
		}
	}
	if first == nil && !progressed {
		for _, cu := range need {
			cu.stalled = true
		}
	}
	return first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
