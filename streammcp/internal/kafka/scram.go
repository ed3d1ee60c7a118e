package kafka

import (
	"crypto/sha256"
	"crypto/sha512"

	"github.com/xdg-go/scram"
)

var (
	sha256Hash scram.HashGeneratorFcn = sha256.New
	sha512Hash scram.HashGeneratorFcn = sha512.New
)

// scramClient adapts xdg-go/scram to sarama.SCRAMClient.
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func newSCRAM(h scram.HashGeneratorFcn) *scramClient { return &scramClient{hash: h} }

func (s *scramClient) Begin(user, password, authzID string) error {
	c, err := s.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }

func (s *scramClient) Done() bool { return s.conv.Done() }
