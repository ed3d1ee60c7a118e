package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/mcpfleet/mcpfleet/shared/errkind"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/report"
)

type tp struct {
	topic string
	part  int32
}

// compare orders partitions by topic, then number.
func (a tp) compare(b tp) int {
	return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part))
}

// Groups reads every consumer group with its committed and log-end offsets
// using the per-broker plan: one Metadata; then on each broker, which
// coordinates its own groups, one ListGroups, one DescribeGroups for all of
// them and one multi-group OffsetFetch; then one ListOffsets per partition
// leader. The request count depends on the number of brokers only.
//
// A broker that cannot be asked leaves its groups out and is named in
// Groups.Err; the call fails only when metadata cannot be read.
func (c *Client) Groups(ctx context.Context) (*report.Groups, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	md, err := c.metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	type brokerResult struct {
		id     int32
		addr   string
		groups []report.Group
		retry  []string
		err    error
	}
	results := make([]brokerResult, len(md.Brokers))
	// The per-broker phase gets most of the time limit, so that a silent
	// broker leaves time to read the log-end offsets of the others' groups.
	bctx, bcancel := context.WithTimeout(ctx, c.opts.Timeout*6/10)
	defer bcancel()
	var wg sync.WaitGroup
	for i, b := range md.Brokers {
		results[i] = brokerResult{id: b.ID(), addr: b.Addr()}
		wg.Add(1)
		go func(r *brokerResult) {
			defer wg.Done()
			r.groups, r.retry, r.err = c.brokerGroups(bctx, r.id, r.addr, nil)
		}(&results[i])
	}
	wg.Wait()

	out := &report.Groups{}
	seen := map[string]bool{}
	var errs, retry []string
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, fmt.Sprintf("broker %d (%s): %s", r.id, r.addr, errkind.Message(r.err)))
			continue
		}
		for _, g := range r.groups {
			if !seen[g.ID] {
				seen[g.ID] = true
				out.Groups = append(out.Groups, g)
			}
		}
		retry = append(retry, r.retry...)
	}
	// Groups whose coordinator moved while we asked: find it and ask again.
	slices.Sort(retry)
	for _, id := range slices.Compact(retry) {
		if seen[id] {
			continue
		}
		seen[id] = true
		g, err := c.coordinatorGroup(ctx, id)
		if err != nil {
			g = report.Group{ID: id, Err: errkind.Message(err)}
		}
		out.Groups = append(out.Groups, g)
	}
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].ID < out.Groups[j].ID })
	c.logEnds(ctx, md, out.Groups)
	// A broker that metadata shows as dead may still coordinate groups
	// (until Kafka moves its coordinators): say the list may be incomplete.
	snap := snapshot(md)
	snap.Expected = c.opts.Expected
	for _, id := range report.Analyze(snap).OfflineBrokerIDs {
		errs = append(errs, fmt.Sprintf("broker %d is offline: groups it coordinates cannot be listed", id))
	}
	if len(errs) > 0 {
		out.Err = "consumer groups could not be listed on every broker: " + strings.Join(errs, "; ")
	}
	out.Time = time.Now()
	return out, nil
}

// brokerGroups lists, describes and fetches the offsets of the groups
// coordinated by one broker (only ids when given). It returns the groups
// and the ids that must be retried through FindCoordinator.
func (c *Client) brokerGroups(ctx context.Context, id int32, addr string, ids []string) ([]report.Group, []string, error) {
	// KIP-848 ("consumer" type) groups: classic DescribeGroups shows them
	// without members; ConsumerGroupDescribe has them.
	var nextGen []string
	// ListGroups (v5) gives every group's type and (v4) state. A given id
	// is looked up in the coordinator's listing too (one request), so that
	// describe_consumer_group knows a share group from a missing one.
	listed := map[string]sarama.GroupData{}
	lgVersion := listGroupsVersion(c.conf.Version)
	if ids == nil || lgVersion >= 5 {
		lg, err := call(ctx, c, addr, APIListGroups, "list consumer groups", func(b *sarama.Broker) (*sarama.ListGroupsResponse, error) {
			return b.ListGroups(&sarama.ListGroupsRequest{Version: lgVersion})
		})
		if err != nil {
			return nil, nil, err
		}
		if lg.Err != sarama.ErrNoError {
			return nil, nil, c.requestError(addr, "list consumer groups", lg.Err)
		}
		all := ids == nil
		for g := range lg.Groups {
			if all || slices.Contains(ids, g) {
				listed[g] = lg.GroupsData[g]
			}
			if all {
				ids = append(ids, g)
			}
		}
		slices.Sort(ids)
	}
	var classic, share []string
	for _, id := range ids {
		d, ok := listed[id]
		switch {
		case d.GroupType == "share":
			share = append(share, id)
			continue
		case d.GroupType == "consumer":
			nextGen = append(nextGen, id)
		case !ok && c.conf.Version.IsAtLeast(sarama.V4_0_0_0):
			nextGen = append(nextGen, id) // unknown type: ask; classic groups answer with an error
		}
		classic = append(classic, id)
	}
	groups := shareGroups(id, share, listed)
	ids = classic
	if len(ids) == 0 {
		return groups, nil, nil
	}
	dg, err := call(ctx, c, addr, APIDescribeGroups, "describe consumer groups", func(b *sarama.Broker) (*sarama.DescribeGroupsResponse, error) {
		return b.DescribeGroups(&sarama.DescribeGroupsRequest{Version: describeGroupsVersion(c.conf.Version), Groups: ids})
	})
	if err != nil {
		return nil, nil, err
	}
	offsets, err := c.fetchOffsets(ctx, addr, ids)
	if err != nil {
		return nil, nil, err
	}
	described := c.describeNextGen(ctx, addr, nextGen)
	var retry []string
	for _, d := range dg.Groups {
		if movedCoordinator(d.Err) {
			retry = append(retry, d.GroupId)
			continue
		}
		g := report.Group{ID: d.GroupId, State: d.State, ProtocolType: d.ProtocolType, Coordinator: id, Type: "classic"}
		if t := listed[d.GroupId].GroupType; t != "" {
			g.Type = t
		}
		if d.Err != sarama.ErrNoError {
			g.Err = "describe group: " + ErrorName(d.Err)
		}
		memberIDs := make([]string, 0, len(d.Members))
		for mid := range d.Members {
			memberIDs = append(memberIDs, mid)
		}
		slices.Sort(memberIDs)
		for _, mid := range memberIDs {
			m := d.Members[mid]
			mem := report.Member{MemberID: m.MemberId, ClientID: m.ClientId, ClientHost: m.ClientHost}
			if d.ProtocolType == "consumer" && len(m.MemberAssignment) > 0 {
				if a, err := m.GetMemberAssignment(); err == nil {
					mem.Assigned = a.Topics
				}
			}
			g.Members = append(g.Members, mem)
		}
		if ng, ok := described[d.GroupId]; ok {
			g.State, g.ProtocolType, g.Members, g.Type = ng.State, "consumer", ng.Members, "consumer"
		}
		o := offsets[d.GroupId]
		switch {
		case o == nil:
		case movedCoordinator(o.err):
			retry = append(retry, d.GroupId)
			continue
		case o.err == sarama.ErrGroupIDNotFound:
			// kfake and some brokers answer this for a group without
			// commits; it means "no offsets", not a failure.
		case o.err != sarama.ErrNoError:
			g.Err = strings.TrimPrefix(g.Err+"; ", "; ") + "fetch offsets: " + ErrorName(o.err)
		default:
			g.Offsets = o.offsets
		}
		groups = append(groups, g)
	}
	return groups, retry, nil
}

// ShareGroupsUnavailable is what a share group's entry says instead of
// members and lag.
const ShareGroupsUnavailable = "members and lag of share groups are not available: sarama v1.61.1, streammcp's Kafka client, has no ShareGroupDescribe (API 77) or DescribeShareGroupOffsets (API 90) request; the state is ListGroups'. kafka-share-groups.sh --describe --group <id> --members / --offsets shows them"

// shareGroups are the KIP-932 groups a coordinator listed: type and state
// from ListGroups, with what cannot be read said rather than the group
// left out.
func shareGroups(coordinator int32, ids []string, listed map[string]sarama.GroupData) []report.Group {
	var out []report.Group
	for _, gid := range ids {
		d := listed[gid]
		out = append(out, report.Group{ID: gid, State: d.GroupState, ProtocolType: "share", Coordinator: coordinator, Type: "share", Unavailable: ShareGroupsUnavailable})
	}
	return out
}

// describeNextGen describes KIP-848 groups with one ConsumerGroupDescribe.
// Failures leave the classic description in place.
func (c *Client) describeNextGen(ctx context.Context, addr string, ids []string) map[string]report.Group {
	out := map[string]report.Group{}
	if len(ids) == 0 || !c.conf.Version.IsAtLeast(sarama.V4_0_0_0) {
		return out
	}
	resp, err := call(ctx, c, addr, APIConsumerGroupDescribe, "describe consumer groups (KIP-848)", func(b *sarama.Broker) (*sarama.ConsumerGroupDescribeResponse, error) {
		return b.ConsumerGroupDescribe(&sarama.ConsumerGroupDescribeRequest{Version: 0, GroupIDs: ids})
	})
	if err != nil {
		c.log.Debug("KIP-848 groups not described", "broker", addr, "err", err)
		return out
	}
	c.mu.Lock()
	names := c.topicIDs
	c.mu.Unlock()
	for _, d := range resp.Groups {
		if d.ErrorCode != sarama.ErrNoError {
			continue // e.g. a classic group: GROUP_ID_NOT_FOUND
		}
		g := report.Group{ID: d.GroupID, State: d.GroupState}
		for _, m := range d.Members {
			mem := report.Member{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assigned: map[string][]int32{}}
			for _, tp := range m.Assignment.TopicPartitions {
				name := tp.TopicName
				if name == "" {
					name = names[tp.TopicID]
				}
				if name == "" {
					name = tp.TopicID.String()
				}
				mem.Assigned[name] = append(mem.Assigned[name], tp.Partitions...)
			}
			g.Members = append(g.Members, mem)
		}
		sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].MemberID < g.Members[j].MemberID })
		out[d.GroupID] = g
	}
	return out
}

func movedCoordinator(k sarama.KError) bool {
	return k == sarama.ErrNotCoordinatorForConsumer || k == sarama.ErrOffsetsLoadInProgress ||
		k == sarama.ErrConsumerCoordinatorNotAvailable
}

type groupOffsets struct {
	err     sarama.KError
	offsets []report.Offset
}

// fetchOffsets fetches all committed offsets of ids from their coordinator
// at addr: one OffsetFetch v8 for all groups, or one v7 per group when the
// broker (or STREAM_KAFKA_VERSION) predates Kafka 3.0.
func (c *Client) fetchOffsets(ctx context.Context, addr string, ids []string) (map[string]*groupOffsets, error) {
	out := map[string]*groupOffsets{}
	if c.conf.Version.IsAtLeast(sarama.V3_0_0_0) {
		req := &sarama.OffsetFetchRequest{Version: 8}
		for _, id := range ids {
			req.Groups = append(req.Groups, sarama.OffsetFetchRequestGroup{GroupId: id})
		}
		resp, err := call(ctx, c, addr, APIOffsetFetch, "fetch committed offsets", func(b *sarama.Broker) (*sarama.OffsetFetchResponse, error) {
			return b.FetchOffset(req)
		})
		if err != nil {
			return nil, err
		}
		if req.Version >= 8 {
			for _, g := range resp.Groups {
				out[g.GroupId] = &groupOffsets{err: g.Err, offsets: blocksToOffsets(g.Blocks)}
			}
			return out, nil
		}
	}
	for _, id := range ids {
		req := &sarama.OffsetFetchRequest{Version: 7, ConsumerGroup: id}
		if !c.conf.Version.IsAtLeast(sarama.V2_5_0_0) {
			req = sarama.NewOffsetFetchRequest(c.conf.Version, id, nil)
		}
		resp, err := call(ctx, c, addr, APIOffsetFetch, "fetch committed offsets of group "+id, func(b *sarama.Broker) (*sarama.OffsetFetchResponse, error) {
			return b.FetchOffset(req)
		})
		if err != nil {
			return nil, err
		}
		out[id] = &groupOffsets{err: resp.Err, offsets: blocksToOffsets(resp.Blocks)}
	}
	return out, nil
}

func blocksToOffsets(blocks map[string]map[int32]*sarama.OffsetFetchResponseBlock) []report.Offset {
	var out []report.Offset
	for topic, parts := range blocks {
		for p, b := range parts {
			o := report.Offset{Topic: topic, Partition: p, Committed: b.Offset, LogEnd: -1}
			if b.Err != sarama.ErrNoError {
				o.Err = ErrorName(b.Err)
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// coordinator finds the coordinator of group id.
func (c *Client) coordinator(ctx context.Context, id string) (int32, string, error) {
	resp, _, err := anyBroker(ctx, c, APIFindCoordinator, "find the coordinator of group "+id, func(b *sarama.Broker) (*sarama.FindCoordinatorResponse, error) {
		return b.FindCoordinator(&sarama.FindCoordinatorRequest{Version: findCoordinatorVersion(c.conf.Version), CoordinatorKey: id, CoordinatorType: sarama.CoordinatorGroup})
	})
	if err != nil {
		return 0, "", err
	}
	if resp.Err != sarama.ErrNoError {
		return 0, "", errkind.New(kerrKind(resp.Err), "find the coordinator of group "+id, fmt.Errorf("%s: %w", ErrorName(resp.Err), resp.Err), "retry in a moment")
	}
	return resp.Coordinator.ID(), resp.Coordinator.Addr(), nil
}

// coordinatorGroup describes one group through its coordinator.
func (c *Client) coordinatorGroup(ctx context.Context, id string) (report.Group, error) {
	cid, addr, err := c.coordinator(ctx, id)
	if err != nil {
		return report.Group{}, err
	}
	groups, retry, err := c.brokerGroups(ctx, cid, addr, []string{id})
	if err != nil {
		return report.Group{}, err
	}
	if len(retry) > 0 || len(groups) == 0 {
		return report.Group{}, errkind.New(errkind.Unavailable, "describe group "+id, errors.New("its coordinator is moving"), "retry in a moment")
	}
	return groups[0], nil
}

// logEnds fills each offset's log-end offset with one ListOffsets per
// partition leader.
func (c *Client) logEnds(ctx context.Context, md *sarama.MetadataResponse, groups []report.Group) {
	need := map[tp]bool{}
	for _, g := range groups {
		for _, o := range g.Offsets {
			if o.Err == "" {
				need[tp{o.Topic, o.Partition}] = true
			}
		}
	}
	ends, errs := c.offsetsAt(ctx, md, need, sarama.OffsetNewest)
	for gi := range groups {
		for oi := range groups[gi].Offsets {
			o := &groups[gi].Offsets[oi]
			if o.Err != "" {
				continue
			}
			k := tp{o.Topic, o.Partition}
			if e, ok := ends[k]; ok {
				o.LogEnd = e
			} else if msg, ok := errs[k]; ok {
				o.Err = msg
			} else {
				o.Err = "log-end offset unknown"
			}
		}
	}
}

// offsetsAt asks each partition's leader for the offset at time ts
// (sarama.OffsetNewest, OffsetOldest or a time in milliseconds: the first
// offset at or after it, -1 when there is none), one ListOffsets per
// leader broker.
func (c *Client) offsetsAt(ctx context.Context, md *sarama.MetadataResponse, parts map[tp]bool, ts int64) (map[tp]int64, map[tp]string) {
	offs, _, errs := c.offsetsWithTimes(ctx, md, parts, ts)
	return offs, errs
}

// offsetsWithTimes is offsetsAt with the timestamp of each offset found
// (meaningful when ts is a time).
func (c *Client) offsetsWithTimes(ctx context.Context, md *sarama.MetadataResponse, parts map[tp]bool, ts int64) (map[tp]int64, map[tp]int64, map[tp]string) {
	leader := map[tp]int32{}
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			leader[tp{t.Name, p.ID}] = p.Leader
		}
	}
	addrs := brokerAddrs(md)
	byLeader := map[int32]*sarama.OffsetRequest{}
	errs := map[tp]string{}
	for k := range parts {
		l, ok := leader[k]
		switch {
		case !ok:
			errs[k] = "UNKNOWN_TOPIC_OR_PARTITION"
			continue
		case l < 0 || addrs[l] == "":
			errs[k] = "LEADER_NOT_AVAILABLE"
			continue
		}
		req := byLeader[l]
		if req == nil {
			req = sarama.NewOffsetRequest(c.conf.Version)
			byLeader[l] = req
		}
		req.AddBlock(k.topic, k.part, ts, 1)
	}
	ends := map[tp]int64{}
	times := map[tp]int64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for l, req := range byLeader {
		wg.Add(1)
		go func(l int32, req *sarama.OffsetRequest) {
			defer wg.Done()
			resp, err := call(ctx, c, addrs[l], APIListOffsets, "read log-end offsets", func(b *sarama.Broker) (*sarama.OffsetResponse, error) {
				return b.GetAvailableOffsets(req)
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				msg := fmt.Sprintf("broker %d: %s", l, errkind.Message(err))
				for k := range parts {
					if leader[k] == l {
						errs[k] = msg
					}
				}
				return
			}
			for topic, ps := range resp.Blocks {
				for p, b := range ps {
					k := tp{topic, p}
					if b.Err != sarama.ErrNoError {
						errs[k] = ErrorName(b.Err)
						continue
					}
					off := b.Offset
					if req.Version == 0 && len(b.Offsets) > 0 {
						off = b.Offsets[0]
					}
					ends[k] = off
					times[k] = b.Timestamp
				}
			}
		}(l, req)
	}
	wg.Wait()
	return ends, times, errs
}
