package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mcpfleet/mcpfleet/shared/approval"
)

type sizeEstimate struct {
	EligibleBySize *struct {
		RetentionBytes int64  `json:"retention_bytes"`
		Known          bool   `json:"known"`
		Unknown        string `json:"unknown"`
		Bytes          *int64 `json:"bytes"`
		Messages       *int64 `json:"messages"`
		Partitions     []struct {
			Partition int32 `json:"partition"`
			Size      int64 `json:"size_bytes"`
			Bytes     int64 `json:"eligible_bytes"`
			LogStart  int64 `json:"log_start_offset"`
			UpTo      int64 `json:"eligible_before_offset"`
			Messages  int64 `json:"messages"`
		} `json:"partitions"`
	} `json:"eligible_for_deletion_by_size"`
}

// TestRetentionBytesEstimate: lowering retention.bytes previews, per
// partition, the bytes above the new limit on the leader (kadm's
// DescribeAllLogDirs gives the same sizes) and the messages they hold; a
// broker that cannot describe its log dirs makes it "unknown", never 0.
func TestRetentionBytesEstimate(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	ctx := context.Background()
	args := map[string]any{"topic": topicClicks, "set": map[string]any{"retention.bytes": "1000"}, "dryRun": true}
	var st sizeEstimate
	pr := preview(t, e.call("alter_topic_config", args), &st)
	if pr.Class != "destructive" || st.EligibleBySize == nil || !st.EligibleBySize.Known {
		t.Fatalf("class %s, estimate %+v:\n%s", pr.Class, st.EligibleBySize, pr.Summary)
	}
	dirs, err := e.adm.DescribeAllLogDirs(ctx, kadm.TopicsSet{topicClicks: {0: {}, 1: {}, 2: {}}})
	if err != nil {
		t.Fatal(err)
	}
	kadmSize := map[int32]int64{}
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) { kadmSize[p.Partition] = p.Size })
	})
	start, end := e.logOffsets(topicClicks)
	var total int64
	for _, p := range st.EligibleBySize.Partitions {
		k := fmt.Sprintf("%s/%d", topicClicks, p.Partition)
		if p.Size != kadmSize[p.Partition] || p.Size <= 1000 || p.Bytes != p.Size-1000 || p.LogStart != start[k] {
			t.Errorf("partition %d: %+v; kadm size %d, log start %d", p.Partition, p, kadmSize[p.Partition], start[k])
		}
		want := (end[k] - start[k]) * p.Bytes / p.Size
		if p.Messages < want-1 || p.Messages > want+1 || p.UpTo != p.LogStart+p.Messages {
			t.Errorf("partition %d: %d messages up to %d, want about %d", p.Partition, p.Messages, p.UpTo, want)
		}
		total += p.Bytes
	}
	if len(st.EligibleBySize.Partitions) != 3 || *st.EligibleBySize.Bytes != total || *st.EligibleBySize.Messages <= 0 {
		t.Errorf("estimate %+v", st.EligibleBySize)
	}
	for _, w := range []string{"With retention.bytes=1000 (a limit per partition)", fmt.Sprintf("%d byte(s) over 3 partition(s) become eligible for deletion", total)} {
		if !strings.Contains(pr.Summary, w) {
			t.Errorf("summary lacks %q:\n%s", w, pr.Summary)
		}
	}

	// The brokers cannot describe their log dirs: unknown, not zero.
	kc.KF.ControlKey(int16(kmsg.DescribeLogDirs), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.KF.KeepControl()
		resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
		resp.Version = req.GetVersion()
		d := kmsg.NewDescribeLogDirsResponseDir()
		d.Dir, d.ErrorCode = "/var/kafka", kerr.KafkaStorageError.Code
		resp.Dirs = append(resp.Dirs, d)
		return resp, nil, true
	})
	st = sizeEstimate{}
	pr = preview(t, e.call("alter_topic_config", args), &st)
	if st.EligibleBySize == nil || st.EligibleBySize.Known || st.EligibleBySize.Bytes != nil || st.EligibleBySize.Messages != nil ||
		!strings.Contains(st.EligibleBySize.Unknown, "KAFKA_STORAGE_ERROR") {
		t.Errorf("estimate without log dirs %+v", st.EligibleBySize)
	}
	if !strings.Contains(pr.Summary, "the data that becomes eligible for deletion is unknown") || strings.Contains(pr.Summary, " 0 byte") {
		t.Errorf("summary:\n%s", pr.Summary)
	}
	// Raising it has no estimate at all.
	st = sizeEstimate{}
	preview(t, e.call("alter_topic_config", with(args, "set", map[string]any{"retention.bytes": "-1"})), &st)
	if st.EligibleBySize != nil {
		t.Errorf("an increase has an estimate %+v", st.EligibleBySize)
	}
}
