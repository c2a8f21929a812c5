package store_test

import (
	"fmt"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"gorm.io/gorm"
)

// TestGroupCommitCheckpoint: on SQLite the group commit checkpoints the WAL
// after its writers are answered, not inside their COMMIT: the writer whose
// batch makes a checkpoint due returns while the checkpoint is still to run,
// a writer arriving meanwhile commits after it, and that next write starts
// the WAL over.
func TestGroupCommitCheckpoint(t *testing.T) {
	s, _ := storetest.Store(t, "sqlite")
	var order []string // appended by the checkpoint and by writers, which the lead serialises
	at := make(chan struct{})
	release := make(chan struct{})
	store.Checkpoints(s, 10, func() {
		close(at)
		<-release
		order = append(order, "checkpoint")
	})
	queued := make(chan int, 16)
	store.GroupCommits(s, func(n int) { queued <- n }, nil)

	write := func(i int) error {
		return store.Transact(s, ctx, func(tx *gorm.DB) error {
			order = append(order, fmt.Sprint("w", i))
			return tx.Create(&models.Token{ID: fmt.Sprint("tok_ck", i), Name: "ck", Role: models.RoleAgent, Hash: fmt.Sprint("ck-hash", i)}).Error
		})
	}
	// Ten writers, one batch each: the tenth is answered with its
	// checkpoint due and not yet run.
	for i := range 10 {
		done := make(chan error, 1)
		go func() { done <- write(i) }()
		within(t, queued, "a writer's arrival")
		if err := within(t, done, "a writer's answer"); err != nil {
			t.Fatal(err)
		}
	}
	within(t, at, "the checkpoint after the tenth writer")

	done := make(chan error, 1)
	go func() { done <- write(10) }()
	within(t, queued, "the writer arriving during the checkpoint")
	close(release)
	if err := within(t, done, "the writer queued behind the checkpoint"); err != nil {
		t.Fatal(err)
	}
	if got := order[len(order)-2:]; got[0] != "checkpoint" || got[1] != "w10" {
		t.Fatalf("order %v: the writer that queued during the checkpoint ran before it ended", order)
	}

	// The checkpoint copied every frame back, so the eleventh write started
	// the WAL over: the log holds its frames alone, not the eleven writes'.
	var busy, log, copied int
	if err := s.DB.Raw("PRAGMA wal_checkpoint(PASSIVE)").Row().Scan(&busy, &log, &copied); err != nil {
		t.Fatal(err)
	}
	if log == 0 || log > 8 {
		t.Fatalf("the WAL holds %d frames after the checkpoint and one write; want that write's few", log)
	}
}
