package tasks

// Crash makes the keeper write nothing more to the store (no heartbeat,
// no outcome), as if its process had been killed.
func Crash(k *Keeper) {
	k.mu.Lock()
	k.crashed = true
	k.mu.Unlock()
}
