package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"gorm.io/gorm"
)

// within waits for a value on c, failing the test after a deadline.
func within[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// TestGroupCommit: writers that share one transaction (the group commit, on
// both databases) commit or fail each on its own: a writer whose function
// fails (after an audit entry), one that hits a constraint and one that gave
// up before its turn leave nothing, the others all commit, and the audit
// chain the batch wrote verifies.
func TestGroupCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "writer")
		taken, _, err := s.CreateToken(ctx, models.RoleAgent, "taken")
		if err != nil {
			t.Fatal(err)
		}

		t.Run("a failing writer in a batch rolls back alone", func(t *testing.T) {
			const creates = 6
			const writers = creates + 3 // + own error, constraint, cancelled
			queued := make(chan int, 4*writers)
			sizes := make(chan int, 4*writers)
			store.GroupCommits(s, func(n int) { queued <- n }, func(n int) { sizes <- n })
			t.Cleanup(func() { store.GroupCommits(s, nil, nil) })

			// A first writer holds the batch open while the others queue, so
			// they all land in the next one together.
			release := make(chan struct{})
			held := make(chan error, 1)
			holding := make(chan struct{})
			go func() {
				held <- store.Transact(s, ctx, func(tx *gorm.DB) error { close(holding); <-release; return nil })
			}()
			within(t, holding, "the first writer to hold the batch")
			within(t, queued, "the first writer's arrival")

			type result struct {
				id  string
				err error
			}
			results := make(chan result, writers)
			for range creates {
				go func() {
					r, _, err := s.CreateRequest(ctx, p, models.NewRequest{Title: "batched", Options: allowDeny()}, "")
					if err != nil {
						results <- result{err: err}
						return
					}
					results <- result{id: r.ID}
				}()
			}
			errOwn := errors.New("the writer's own failure")
			go func() {
				results <- result{id: "tok_doomed", err: store.Transact(s, ctx, func(tx *gorm.DB) error {
					if err := tx.Create(&models.Token{ID: "tok_doomed", Name: "doomed", Role: models.RoleAgent, Hash: "doomed-hash"}).Error; err != nil {
						return err
					}
					// Its audit entry goes with it: the batch's head must too.
					if err := store.AppendAudit(tx, &store.Audit{RequestID: "req_doomed", Version: 1, Action: "create", Actor: "agent:doomed", CreatedAt: time.Now()}); err != nil {
						return err
					}
					return errOwn
				})}
			}()
			go func() {
				results <- result{id: "tok_dup", err: store.Transact(s, ctx, func(tx *gorm.DB) error {
					if err := tx.Create(&models.Token{ID: "tok_first_half", Name: "half", Role: models.RoleAgent, Hash: "half-hash"}).Error; err != nil {
						return err
					}
					return tx.Create(&models.Token{ID: "tok_dup", Name: "dup", Role: models.RoleAgent, Hash: taken.Hash}).Error
				})}
			}()
			gone, cancel := context.WithCancel(ctx)
			cancel()
			go func() {
				results <- result{id: "tok_gone", err: store.Transact(s, gone, func(tx *gorm.DB) error {
					return tx.Create(&models.Token{ID: "tok_gone", Name: "gone", Role: models.RoleAgent, Hash: "gone-hash"}).Error
				})}
			}()

			for n := 0; n < writers; {
				n = within(t, queued, "every writer to queue behind the first")
			}
			close(release)
			if err := within(t, held, "the first writer's commit"); err != nil {
				t.Fatalf("first writer: %v", err)
			}
			if n := within(t, sizes, "the first batch"); n != 1 {
				t.Fatalf("first batch had %d writers, want 1", n)
			}
			if n := within(t, sizes, "the shared batch"); n != writers-1 {
				t.Fatalf("shared batch had %d writers, want %d (all but the cancelled one)", n, writers-1)
			}

			var committed []string
			for range writers {
				res := within(t, results, "a writer's answer")
				switch res.id {
				case "tok_doomed":
					if !errors.Is(res.err, errOwn) {
						t.Errorf("failing writer got %v, want its own error", res.err)
					}
				case "tok_dup":
					if !errors.Is(res.err, gorm.ErrDuplicatedKey) {
						t.Errorf("constraint writer got %v, want a duplicate key", res.err)
					}
				case "tok_gone":
					if !errors.Is(res.err, context.Canceled) {
						t.Errorf("cancelled writer got %v, want context.Canceled", res.err)
					}
				default:
					if res.err != nil {
						t.Errorf("a writer beside the failing ones failed: %v", res.err)
						continue
					}
					committed = append(committed, res.id)
				}
			}
			if len(committed) != creates {
				t.Fatalf("%d of %d filings committed", len(committed), creates)
			}
			for _, id := range committed {
				if _, err := s.GetRequest(ctx, id); err != nil {
					t.Errorf("committed filing %s: %v", id, err)
				}
				if trail, err := s.AuditTrail(ctx, id); err != nil || len(trail) == 0 {
					t.Errorf("filing %s has no audit row (%v)", id, err)
				}
			}
			var left []string
			if err := s.DB.Model(&models.Token{}).Where("id IN ?", []string{"tok_doomed", "tok_first_half", "tok_dup", "tok_gone"}).Pluck("id", &left).Error; err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Fatalf("failed writers left rows: %v", left)
			}
			if trail, err := s.AuditTrail(ctx, "req_doomed"); err != nil || len(trail) != 0 {
				t.Fatalf("the failed writer's audit entry: %v, %v", trail, err)
			}
			if _, err := s.VerifyAudit(ctx, nil); err != nil {
				t.Fatalf("the chain after a batch with a failed writer: %v", err)
			}
		})
	})
}
