package store

import "github.com/google/uuid"

// SetClaimTurns puts a rotation's cursor at ws, as if its last claim had
// served ws.
func SetClaimTurns(t *ClaimTurns, ws uuid.UUID) {
	t.lock()
	defer t.unlock()
	t.moveTo(ws)
}
