package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// batchOf is one decision per request, each on the version given, as op.
func batchOf(op models.Principal, option string, rs []*models.Request) []store.BatchItem {
	items := make([]store.BatchItem, len(rs))
	for i, r := range rs {
		items[i] = store.BatchItem{ID: r.ID, Decision: models.Decision{Version: r.Version, Option: option, By: op.Label(), Via: models.ViaAPI, Voter: &op}}
	}
	return items
}

// batchIDs are the batch ids on the request's audit entries of action.
func batchIDs(t *testing.T, s *store.Store, id, action string) []string {
	t.Helper()
	trail, err := s.AuditTrail(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range trail {
		if a.Action != action {
			continue
		}
		var d struct {
			Batch string `json:"batch_id"`
		}
		if err := json.Unmarshal([]byte(a.Detail), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Batch)
	}
	return out
}

// TestDecideEach: a batch decides each request on its own; one that changes
// in the middle of the batch is left open and named, the others stand, and
// every decision's audit entry carries the batch id.
func TestDecideEach(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "batcher")
		op := voter(t, s, "olga")

		t.Run("a batch of 12 with one changed midway: 11 decided, 1 named", func(t *testing.T) {
			var rs []*models.Request
			for i := range 12 {
				rs = append(rs, file(t, s, p, models.NewRequest{Title: fmt.Sprint("Run make test ", i), Unsealed: true}))
			}
			changed := rs[6]
			// The filer edits the seventh while the batch is between its read
			// and its write: the decision the operator made was on the old text.
			store.OnDecideRead(s, func(r *models.Request) {
				if r.ID != changed.ID {
					return
				}
				store.OnDecideRead(s, nil)
				if _, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Summary: ptr("and then rm -rf ~")}); err != nil {
					t.Errorf("the edit midway: %v", err)
				}
			})
			t.Cleanup(func() { store.OnDecideRead(s, nil) })
			batch, outs := s.DecideEach(ctx, batchOf(op, "once", rs))
			if len(outs) != 12 || batch == "" {
				t.Fatalf("%q: %d outcomes", batch, len(outs))
			}
			for i, o := range outs {
				got, err := s.GetRequest(ctx, rs[i].ID)
				if err != nil {
					t.Fatal(err)
				}
				if rs[i] == changed {
					var e *models.Error
					if models.ErrorCode(o.Err) != models.ECodeVersionConflict || !errors.As(o.Err, &e) || e.Current == nil || e.Current.Version != 2 {
						t.Fatalf("the changed one: %v", o.Err)
					}
					if got.Status != models.StatusOpen || got.Version != 2 || got.Decision != nil {
						t.Fatalf("the changed one was decided: %s v%d", got.Status, got.Version)
					}
					if ids := batchIDs(t, s, got.ID, "decide"); len(ids) != 0 {
						t.Fatalf("the changed one has decide entries: %v", ids)
					}
					continue
				}
				if o.Err != nil || o.Request.Status != models.StatusResolved || *got.Decision != "once" || *got.DecidedBy != "operator:olga" {
					t.Fatalf("#%d: %v %+v", i, o.Err, got)
				}
				if ids := batchIDs(t, s, got.ID, "decide"); len(ids) != 1 || ids[0] != batch {
					t.Fatalf("#%d: decide entries carry %v, want [%s]", i, ids, batch)
				}
			}
		})

		t.Run("a two-person request inside a batch gets one vote and stays open", func(t *testing.T) {
			alice, bob := voter(t, s, "alice-b", "release"), voter(t, s, "bob-b", "release")
			plain := file(t, s, p, models.NewRequest{Title: "Run make lint"})
			two := file(t, s, p, models.NewRequest{Title: "Run make release", Approvers: &models.Approvers{Groups: []string{"release"}, Required: 2}})
			first, outs := s.DecideEach(ctx, batchOf(alice, "once", []*models.Request{plain, two}))
			if outs[0].Err != nil || outs[0].Request.Status != models.StatusResolved {
				t.Fatalf("the plain one: %v", outs[0].Err)
			}
			if outs[1].Err != nil || !outs[1].Request.Open() || outs[1].Request.Version != 2 || outs[1].Request.VotesFor("once") != 1 {
				t.Fatalf("the two-person one after one vote: %v %+v", outs[1].Err, outs[1].Request)
			}
			// The same operator again, in another batch: not a second vote.
			_, again := s.DecideEach(ctx, batchOf(alice, "once", []*models.Request{outs[1].Request}))
			if models.ErrorCode(again[0].Err) != models.ECodeAlreadyVoted {
				t.Fatalf("alice's second vote: %v", again[0].Err)
			}
			second, outs := s.DecideEach(ctx, batchOf(bob, "once", []*models.Request{outs[1].Request}))
			if outs[0].Err != nil || outs[0].Request.Status != models.StatusResolved || *outs[0].Request.Decision != "once" {
				t.Fatalf("the second vote: %v %+v", outs[0].Err, outs[0].Request)
			}
			if ids := batchIDs(t, s, two.ID, "vote"); len(ids) != 2 || ids[0] != first || ids[1] != second {
				t.Fatalf("vote entries carry %v, want [%s %s]", ids, first, second)
			}
		})

		t.Run("a batch allows only once: an allow that saves is refused", func(t *testing.T) {
			opts := []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "project", Label: "Allow for project", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
			r := file(t, s, p, models.NewRequest{Title: "Run git push", Options: opts})
			_, outs := s.DecideEach(ctx, batchOf(op, "project", []*models.Request{r}))
			if models.ErrorCode(outs[0].Err) != models.ECodeNotInBatch {
				t.Fatalf("an allow that saves in a batch: %v", outs[0].Err)
			}
			if got, _ := s.GetRequest(ctx, r.ID); !got.Open() || got.Version != 1 {
				t.Fatalf("stored %s v%d", got.Status, got.Version)
			}
			// Outside a batch the same option is the operator's to choose.
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "project", By: op.Label(), Via: models.ViaAPI, Voter: &op}); err != nil {
				t.Fatalf("the same option decided alone: %v", err)
			}
		})
	})
}

// TestDecideEachAcrossReplicas: a batch on one replica and a single decide on
// another race for the same request: exactly one wins it, the loser is told
// it was decided, and the rest of the batch stands.
func TestDecideEachAcrossReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s1, s2 := replicas(t, dialect)
		p := agent(t, s1, "racer")
		alice, bob := voter(t, s1, "alice-x"), voter(t, s1, "bob-x")
		wins := map[string]int{}
		for trial := range 16 {
			var rs []*models.Request
			for i := range 5 {
				rs = append(rs, file(t, s1, p, models.NewRequest{Title: fmt.Sprint("Deploy ", trial, ".", i)}))
			}
			contested := rs[2]
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			start := make(chan struct{})
			batchDone := make(chan []store.Outcome, 1)
			singleDone := make(chan error, 1)
			go func() {
				<-start
				_, outs := s1.DecideEach(ctx, batchOf(alice, "once", rs))
				batchDone <- outs
			}()
			go func() {
				<-start
				_, err := s2.Decide(ctx, contested.ID, models.Decision{Version: 1, Option: "deny", By: bob.Label(), Via: models.ViaAPI, Voter: &bob})
				singleDone <- err
			}()
			close(start)
			var outs []store.Outcome
			var single error
			for range 2 {
				select {
				case outs = <-batchDone:
				case single = <-singleDone:
				case <-ctx.Done():
					t.Fatalf("trial %d: the race did not end within 20s", trial)
				}
			}
			cancel()
			batchErr := outs[2].Err
			got, err := s2.GetRequest(context.Background(), contested.ID)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case batchErr == nil && models.ErrorCode(single) == models.ECodeAlreadyDecided:
				wins["batch"]++
				if *got.Decision != "once" {
					t.Fatalf("trial %d: the batch won but %s is stored", trial, *got.Decision)
				}
			case single == nil && models.ErrorCode(batchErr) == models.ECodeAlreadyDecided:
				wins["single"]++
				if *got.Decision != "deny" {
					t.Fatalf("trial %d: the single decide won but %s is stored", trial, *got.Decision)
				}
			default:
				t.Fatalf("trial %d: want exactly one winner: batch %v, single %v", trial, batchErr, single)
			}
			if n := len(batchIDs(t, s1, contested.ID, "decide")); n != 1 {
				t.Fatalf("trial %d: %d decide entries for the contested request", trial, n)
			}
			for i, o := range outs {
				if i != 2 && (o.Err != nil || o.Request.Status != models.StatusResolved) {
					t.Fatalf("trial %d, #%d: %v", trial, i, o.Err)
				}
			}
		}
		t.Logf("%s: %v", dialect, wins)
	})
}
