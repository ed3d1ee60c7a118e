package kafka

import "github.com/IBM/sarama"

// Request versions by the configured protocol version (STREAM_KAFKA_VERSION):
// sarama refuses to send a version newer than the one configured, and
// negotiates each request down to what the broker advertises.

func listGroupsVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V3_8_0_0):
		return 5 // group types (KIP-848)
	case v.IsAtLeast(sarama.V2_6_0_0):
		return 4
	case v.IsAtLeast(sarama.V2_4_0_0):
		return 3
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 1
	}
	return 0
}

func describeGroupsVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_4_0_0):
		return 5
	case v.IsAtLeast(sarama.V2_3_0_0):
		return 3
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 1
	}
	return 0
}

func findCoordinatorVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 1
	}
	return 0
}

func createTopicsVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_4_0_0):
		return 4 // replication factor -1: the broker default (KIP-464)
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 3
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_10_2_0):
		return 1
	}
	return 0
}

func fetchVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 4 // record batches with headers
	case v.IsAtLeast(sarama.V0_10_1_0):
		return 3
	}
	return 0
}
