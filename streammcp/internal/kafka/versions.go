package kafka

import "github.com/IBM/sarama"

// Request versions by the configured protocol version (STREAM_KAFKA_VERSION):
// sarama refuses to send a version newer than the one configured, and
// negotiates each request down to what the broker advertises. Each table
// lists, newest first, the first Kafka release that accepts a request version.

type since struct {
	kafka   sarama.KafkaVersion
	request int16
}

var (
	listGroupsVersions = []since{
		{sarama.V3_8_0_0, 5}, // group types (KIP-848)
		{sarama.V2_6_0_0, 4}, {sarama.V2_4_0_0, 3}, {sarama.V2_0_0_0, 2}, {sarama.V0_11_0_0, 1},
	}
	describeGroupsVersions = []since{
		{sarama.V2_4_0_0, 5}, {sarama.V2_3_0_0, 3}, {sarama.V2_0_0_0, 2}, {sarama.V0_11_0_0, 1},
	}
	findCoordinatorVersions = []since{
		{sarama.V2_0_0_0, 2}, {sarama.V0_11_0_0, 1},
	}
	createTopicsVersions = []since{
		{sarama.V2_4_0_0, 4}, // replication factor -1: the broker default (KIP-464)
		{sarama.V2_0_0_0, 3}, {sarama.V0_11_0_0, 2}, {sarama.V0_10_2_0, 1},
	}
	fetchVersions = []since{
		{sarama.V0_11_0_0, 4}, // record batches with headers
		{sarama.V0_10_1_0, 3},
	}
	describeConfigsVersions = []since{
		{sarama.V2_6_0_0, 4}, {sarama.V2_0_0_0, 2}, {sarama.V1_1_0_0, 1},
	}
)

// requestVersion picks the newest request version that v accepts (0 when none).
func requestVersion(v sarama.KafkaVersion, table []since) int16 {
	for _, s := range table {
		if v.IsAtLeast(s.kafka) {
			return s.request
		}
	}
	return 0
}

func listGroupsVersion(v sarama.KafkaVersion) int16 { return requestVersion(v, listGroupsVersions) }
func describeGroupsVersion(v sarama.KafkaVersion) int16 {
	return requestVersion(v, describeGroupsVersions)
}
func findCoordinatorVersion(v sarama.KafkaVersion) int16 {
	return requestVersion(v, findCoordinatorVersions)
}
func createTopicsVersion(v sarama.KafkaVersion) int16 { return requestVersion(v, createTopicsVersions) }
func fetchVersion(v sarama.KafkaVersion) int16        { return requestVersion(v, fetchVersions) }
func describeConfigsVersion(v sarama.KafkaVersion) int16 {
	return requestVersion(v, describeConfigsVersions)
}
