package store_test

import (
	"errors"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"gorm.io/gorm"
)

// TestPGAnnouncerBatch: the writers of one group commit send their NOTIFYs
// together, before the COMMIT. Every committed writer's change reaches the
// other replica once, in the order the batch wrote them (its audit order);
// a writer rolled back to its savepoint announces nothing.
func TestPGAnnouncerBatch(t *testing.T) {
	url := storetest.URL(t, "postgres")
	db := storetest.Migrated(t, url)
	a := startReplica(t, url, db, nil)
	b := startReplica(t, url, db, nil)
	p := agent(t, a.store, "batched")
	sub := b.changes.Subscribe(64)
	defer sub.Close()

	const creates = 5
	queued, sizes := make(chan int, 16), make(chan int, 16)
	store.GroupCommits(a.store, func(n int) { queued <- n }, func(n int) { sizes <- n })
	t.Cleanup(func() { store.GroupCommits(a.store, nil, nil) })

	// A first writer holds the batch open while the others queue behind it.
	release, holding, held := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		held <- store.Transact(a.store, ctx, func(tx *gorm.DB) error { close(holding); <-release; return nil })
	}()
	within(t, holding, "the first writer to hold the batch")
	within(t, queued, "the first writer's arrival")

	ids := make(chan string, creates)
	errs := make(chan error, creates+1)
	for range creates {
		go func() {
			r, _, err := a.store.CreateRequest(ctx, p, models.NewRequest{Title: "batched", Options: allowDeny()}, "")
			if err == nil {
				ids <- r.ID
			}
			errs <- err
		}()
	}
	errOwn := errors.New("the writer's own failure")
	go func() {
		errs <- store.Transact(a.store, ctx, func(tx *gorm.DB) error {
			if err := store.AppendAudit(tx, &store.Audit{RequestID: "req_doomed", Version: 1, Action: "create", Actor: "agent:doomed"}); err != nil {
				return err
			}
			return errOwn
		})
	}()
	for n := 0; n < creates+1; {
		n = within(t, queued, "every writer to queue behind the first")
	}
	close(release)
	if err := within(t, held, "the first writer's commit"); err != nil {
		t.Fatal(err)
	}
	within(t, sizes, "the first batch")
	if n := within(t, sizes, "the shared batch"); n != creates+1 {
		t.Fatalf("the shared batch had %d writers, want %d", n, creates+1)
	}
	for range creates + 1 {
		if err := within(t, errs, "a writer's answer"); err != nil && !errors.Is(err, errOwn) {
			t.Fatalf("a writer failed: %v", err)
		}
	}

	var filed []string
	for range creates {
		filed = append(filed, within(t, ids, "a filing's id"))
	}
	var order []string // the batch's creates in audit order, and nothing of the doomed writer
	if err := db.Model(&store.Audit{}).Where("action = ? AND request_id IN ?", "create", append(filed, "req_doomed")).
		Order("chain, seq").Pluck("request_id", &order).Error; err != nil {
		t.Fatal(err)
	}
	if len(order) != creates {
		t.Fatalf("audit holds %d creates, want %d: %v", len(order), creates, order)
	}
	for i, want := range order {
		ch := skipResyncs(t, sub)
		if ch.RequestID != want || ch.Action != "create" {
			t.Fatalf("announcement %d is %s of %s, want the create of %s (audit order %v)", i, ch.Action, ch.RequestID, want, order)
		}
	}
}
