package kafka

import (
	"fmt"

	"github.com/IBM/sarama"
)

// errorNames are Kafka's protocol names for the error codes a report can
// meet; sarama only carries their prose.
var errorNames = map[sarama.KError]string{
	sarama.ErrUnknown:                         "UNKNOWN_SERVER_ERROR",
	sarama.ErrUnknownTopicOrPartition:         "UNKNOWN_TOPIC_OR_PARTITION",
	sarama.ErrLeaderNotAvailable:              "LEADER_NOT_AVAILABLE",
	sarama.ErrNotLeaderForPartition:           "NOT_LEADER_OR_FOLLOWER",
	sarama.ErrRequestTimedOut:                 "REQUEST_TIMED_OUT",
	sarama.ErrBrokerNotAvailable:              "BROKER_NOT_AVAILABLE",
	sarama.ErrReplicaNotAvailable:             "REPLICA_NOT_AVAILABLE",
	sarama.ErrOffsetsLoadInProgress:           "COORDINATOR_LOAD_IN_PROGRESS",
	sarama.ErrConsumerCoordinatorNotAvailable: "COORDINATOR_NOT_AVAILABLE",
	sarama.ErrNotCoordinatorForConsumer:       "NOT_COORDINATOR",
	sarama.ErrGroupAuthorizationFailed:        "GROUP_AUTHORIZATION_FAILED",
	sarama.ErrTopicAuthorizationFailed:        "TOPIC_AUTHORIZATION_FAILED",
	sarama.ErrClusterAuthorizationFailed:      "CLUSTER_AUTHORIZATION_FAILED",
	sarama.ErrKafkaStorageError:               "KAFKA_STORAGE_ERROR",
	sarama.ErrGroupIDNotFound:                 "GROUP_ID_NOT_FOUND",
	sarama.ErrFencedLeaderEpoch:               "FENCED_LEADER_EPOCH",
	sarama.ErrUnknownLeaderEpoch:              "UNKNOWN_LEADER_EPOCH",
	sarama.ErrOffsetNotAvailable:              "OFFSET_NOT_AVAILABLE",
	sarama.ErrSASLAuthenticationFailed:        "SASL_AUTHENTICATION_FAILED",
	sarama.ErrTopicAlreadyExists:              "TOPIC_ALREADY_EXISTS",
	sarama.ErrInvalidReplicationFactor:        "INVALID_REPLICATION_FACTOR",
	sarama.ErrInvalidPartitions:               "INVALID_PARTITIONS",
	sarama.ErrInvalidTopic:                    "INVALID_TOPIC_EXCEPTION",
	sarama.ErrOffsetOutOfRange:                "OFFSET_OUT_OF_RANGE",
	sarama.ErrUnsupportedVersion:              "UNSUPPORTED_VERSION",
	sarama.ErrUnknownMemberId:                 "UNKNOWN_MEMBER_ID",
	sarama.ErrIllegalGeneration:               "ILLEGAL_GENERATION",
	sarama.ErrRebalanceInProgress:             "REBALANCE_IN_PROGRESS",
	sarama.ErrNonEmptyGroup:                   "NON_EMPTY_GROUP",
	sarama.ErrGroupSubscribedToTopic:          "GROUP_SUBSCRIBED_TO_TOPIC",
	sarama.ErrInvalidConfig:                   "INVALID_CONFIG",
	sarama.ErrInvalidRequest:                  "INVALID_REQUEST",
	sarama.ErrPolicyViolation:                 "POLICY_VIOLATION",
	sarama.ErrTopicDeletionDisabled:           "TOPIC_DELETION_DISABLED",
	sarama.ErrNotController:                   "NOT_CONTROLLER",
}

// ErrorName returns Kafka's name for an error code, e.g. LEADER_NOT_AVAILABLE.
func ErrorName(k sarama.KError) string {
	if k == sarama.ErrNoError {
		return ""
	}
	if n, ok := errorNames[k]; ok {
		return n
	}
	return fmt.Sprintf("KAFKA_ERROR_%d", int16(k))
}
