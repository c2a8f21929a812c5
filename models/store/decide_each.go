package store

import (
	"context"

	"github.com/gatehousehq/gatehouse/models"
)

// BatchItem is one decision of a batch: the request and what is decided on it.
type BatchItem struct {
	ID       string
	Decision models.Decision
}

// Outcome is what became of one decision of a batch: the record as decided
// (or voted on), or why not, with the record as it stands when known.
type Outcome struct {
	Request *models.Request
	Err     error
}

// DecideEach decides each item on its own, in order, exactly as Decide does
// (its own checks, transaction and audit entry), all under one new batch id
// that every audit entry carries: a refused or changed request leaves the
// others to stand or fail on their own. It returns the batch id and one
// outcome per item, in order.
func (s *Store) DecideEach(ctx context.Context, items []BatchItem) (string, []Outcome) {
	batch := models.NewID("bat_")
	out := make([]Outcome, len(items))
	for i, it := range items {
		it.Decision.Batch = batch
		out[i].Request, out[i].Err = s.Decide(ctx, it.ID, it.Decision)
	}
	return batch, out
}
