package mcpserver

import "github.com/mcpfleet/mcpfleet/streammcp/internal/kafka"

// New is a Handler for one cluster, named default, read through kc: the
// surface as a server without STREAM_CLUSTERS has it.
func New(kc *kafka.Client, o Options) *Handler {
	return NewFleet([]Cluster{{Name: "default", Client: kc, LagThreshold: o.LagThreshold}}, o)
}
