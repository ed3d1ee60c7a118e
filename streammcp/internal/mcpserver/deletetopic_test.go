package mcpserver_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mcpfleet/mcpfleet/shared/approval"
	"github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"
)

// TestDeleteTopicEnableUnknown: kfake's DescribeConfigs does not report
// delete.topic.enable, so the preview must say it is unknown (and why)
// rather than nothing; when the controller reports it (a rewritten
// DescribeConfigs answer, as kfake cannot hold the key) the preview says
// its value.
func TestDeleteTopicEnableUnknown(t *testing.T) {
	kc := startChanges(t)
	e := newChangeEnv(t, kc, approval.Config{Policy: approval.None})
	args := map[string]any{"topic": topicClicks, "dryRun": true}
	var ti kafka.TopicInfoForChange
	pr := preview(t, e.call("delete_topic", args), &ti)
	if ti.DeleteEnabled != nil || !strings.Contains(ti.DeleteEnabledUnknown, "did not report it") {
		t.Errorf("kfake: delete_topic_enable %v, unknown %q", ti.DeleteEnabled, ti.DeleteEnabledUnknown)
	}
	if !strings.Contains(pr.Summary, "delete.topic.enable: unknown, the controller (broker ") || !strings.Contains(pr.Summary, "if it is false Kafka refuses (TOPIC_DELETION_DISABLED)") {
		t.Errorf("summary:\n%s", pr.Summary)
	}

	var reported atomic.Value
	reported.Store("false")
	kc.KF.ControlKey(int16(kmsg.DescribeConfigs), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.DescribeConfigsRequest)
		if len(r.Resources) != 1 || r.Resources[0].ResourceType != kmsg.ConfigResourceTypeBroker {
			return nil, nil, false
		}
		kc.KF.KeepControl()
		resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
		resp.Version = r.Version
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.Resources[0].ResourceType, r.Resources[0].ResourceName
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = "delete.topic.enable", kmsg.StringPtr(reported.Load().(string))
		rr.Configs = append(rr.Configs, c)
		resp.Resources = append(resp.Resources, rr)
		return resp, nil, true
	})
	for _, v := range []string{"false", "true"} {
		reported.Store(v)
		ti = kafka.TopicInfoForChange{}
		pr = preview(t, e.call("delete_topic", args), &ti)
		if ti.DeleteEnabled == nil || *ti.DeleteEnabled != (v == "true") || ti.DeleteEnabledUnknown != "" {
			t.Errorf("%s: delete_topic_enable %v, unknown %q", v, ti.DeleteEnabled, ti.DeleteEnabledUnknown)
		}
		want := map[string]string{"false": "delete.topic.enable=false: Kafka will refuse", "true": "delete.topic.enable=true."}[v]
		if !strings.Contains(pr.Summary, want) || strings.Contains(pr.Summary, "unknown") {
			t.Errorf("%s: summary:\n%s", v, pr.Summary)
		}
	}
}
