package fleet

import "github.com/mcpfleet/mcpfleet/shared/backendcall"

// Record makes every member record its back-end requests (runtime API
// commands, stats page requests) with rec under the member's own name, the
// backend label of mcpfleet_backend_* (instance names come from
// PROXY_INSTANCES: a closed set); the one HAProxy of a configuration
// without instances records under rec's own label. Call it once, before
// the fleet is used.
func (f *Fleet) Record(rec *backendcall.Recorder) {
	for _, m := range f.members {
		r := rec
		if f.Named() {
			r = rec.WithBackend(m.Name)
		}
		if m.Client.Runtime != nil {
			m.Client.Runtime.Recorder = r
		}
		if m.Client.Stats != nil {
			m.Client.Stats.Recorder = r
		}
	}
}
