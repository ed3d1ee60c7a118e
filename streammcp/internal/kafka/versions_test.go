package kafka

import (
	"testing"

	"github.com/IBM/sarama"
)

func TestRequestVersionPicksNewestAccepted(t *testing.T) {
	tests := []struct {
		name  string
		kafka sarama.KafkaVersion
		pick  func(sarama.KafkaVersion) int16
		want  int16
	}{
		{"ListGroups on 4.0", sarama.V4_0_0_0, listGroupsVersion, 5},
		{"ListGroups on 2.8", sarama.V2_8_0_0, listGroupsVersion, 4},
		{"ListGroups on 0.10", sarama.V0_10_2_0, listGroupsVersion, 0},
		{"DescribeGroups on 2.3 (no v4 step)", sarama.V2_3_0_0, describeGroupsVersion, 3},
		{"FindCoordinator on 1.0", sarama.V1_0_0_0, findCoordinatorVersion, 1},
		{"CreateTopics on 2.4", sarama.V2_4_0_0, createTopicsVersion, 4},
		{"Fetch on 0.10.1", sarama.V0_10_1_0, fetchVersion, 3},
		{"DescribeConfigs on 1.0", sarama.V1_0_0_0, describeConfigsVersion, 0},
		{"DescribeConfigs on 2.6", sarama.V2_6_0_0, describeConfigsVersion, 4},
	}
	for _, tt := range tests {
		if got := tt.pick(tt.kafka); got != tt.want {
			t.Errorf("%s: version %d, want %d", tt.name, got, tt.want)
		}
	}
}
