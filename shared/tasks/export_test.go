package tasks

// Crash makes the keeper write nothing more to the store (no heartbeat,
// no outcome), as if its process had been killed.
func Crash(k *Keeper) {
	k.mu.Lock()
	k.crashed = true
	k.mu.Unlock()
}

// Stored is how many task slots are held, over every identity.
func (k *Keeper) Stored() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, c := range k.outstanding {
		n += c
	}
	return n
}
