package serve

// InFlight reports how many tool calls and resource reads are running.
func (s *Server) InFlight() int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return s.calls.n
}
