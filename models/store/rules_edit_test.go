package store_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

const editRules = `rules:
  - name: no-drop
    match:
      text: drop
    action: deny
  - name: risky
    match:
      text: deploy
    action: hold
    window: 2m
    then: deny
  - name: pinned
    match:
      text: migrate
    action: hold
    window: 2m
    then: go
`

// heldOptions have ids that read as neither effect, so an edit may turn one
// around without being refused as misleading (turning "deny" into an allow
// is refused at once: the last subtest).
func heldOptions() []models.Option {
	return []models.Option{{ID: "go", Label: "Go", Effect: "allow"}, {ID: "hold", Label: "Hold", Effect: "deny"}}
}

func patch(t *testing.T, s *store.Store, p models.Principal, id string, pt store.Patch) *models.Request {
	t.Helper()
	r, err := s.PatchRequest(ctx, id, p, pt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRulesJudgeEdits: an owner's edit is judged by the rules like a filing, so
// editing a held request cannot turn the rule's "hold, then deny" into an allow.
func TestRulesJudgeEdits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _, clock := ruledStore(t, dialect, editRules)
		p := agent(t, s, "a1")
		str := func(v string) *string { return &v }

		t.Run("reworded and re-labelled: the hold lapses to the operator, never an allow", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "deploy prod", Options: heldOptions()})
			if !r.Held() || *r.HoldThen != "hold" {
				t.Fatalf("%+v", r)
			}
			opts := []models.Option{{ID: "hold", Label: "Go ahead", Effect: "allow"}}
			got := patch(t, s, p, r.ID, store.Patch{Title: str("harmless"), Options: &opts})
			if got.Held() || got.Status != models.StatusOpen {
				t.Fatalf("after the edit: %+v", got)
			}
			*clock = clock.Add(3 * time.Minute)
			if n, _, err := s.ReleaseHolds(ctx); n != 0 || err != nil {
				t.Fatalf("%d %v", n, err)
			}
			got, _ = s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusOpen || got.Decision != nil {
				t.Fatalf("decided: %+v", got)
			}
			if trail := actions(t, s, r.ID); !equal(trail, []string{"create/api", "hold/rule:risky", "edit/api", "hold_lapsed/rule:risky"}) {
				t.Fatalf("trail %v", trail)
			}
		})

		t.Run("options re-labelled, text kept: the hold follows the option that still denies", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "deploy prod", Options: heldOptions()})
			opts := []models.Option{{ID: "hold", Label: "Go ahead", Effect: "allow"}, {ID: "no", Label: "No", Effect: "deny"}}
			got := patch(t, s, p, r.ID, store.Patch{Options: &opts})
			if !got.Held() || *got.HoldThen != "no" || !got.HoldUntil.Equal(*r.HoldUntil) {
				t.Fatalf("after the edit: %+v", got)
			}
			*clock = clock.Add(3 * time.Minute)
			if n, _, err := s.ReleaseHolds(ctx); n != 1 || err != nil {
				t.Fatalf("%d %v", n, err)
			}
			got, _ = s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusResolved || got.DecisionEffect() != models.EffectDeny {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("options re-labelled with no deny left: the hold lapses", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "deploy prod", Options: heldOptions()})
			opts := []models.Option{{ID: "hold", Label: "Go ahead", Effect: "allow"}}
			got := patch(t, s, p, r.ID, store.Patch{Options: &opts})
			if got.Held() {
				t.Fatalf("after the edit: %+v", got)
			}
			*clock = clock.Add(3 * time.Minute)
			if n, _, _ := s.ReleaseHolds(ctx); n != 0 {
				t.Fatalf("settled %d", n)
			}
		})

		t.Run("a named then option whose effect changed lapses", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "migrate db", Options: heldOptions()})
			if !r.Held() || *r.HoldThen != "go" {
				t.Fatalf("%+v", r)
			}
			opts := []models.Option{{ID: "go", Label: "Go", Effect: "deny"}, {ID: "hold", Label: "Hold", Effect: "deny"}}
			got := patch(t, s, p, r.ID, store.Patch{Options: &opts})
			if got.Held() {
				t.Fatalf("after the edit: %+v", got)
			}
		})

		t.Run("at the window's end the then option must still have the effect it had", func(t *testing.T) {
			// Written around PatchRequest (another version, a manual fix): the
			// sweep itself refuses an option whose effect changed.
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "deploy prod", Options: allowDeny()})
			opts := []models.Option{{ID: "once", Label: "Allow", Effect: "allow"}, {ID: "deny", Label: "Go ahead", Effect: "allow"}}
			if err := s.DB.Model(&models.Request{}).Where("id = ?", r.ID).Select("options").Updates(&models.Request{Options: opts}).Error; err != nil {
				t.Fatal(err)
			}
			*clock = clock.Add(3 * time.Minute)
			if n, _, err := s.ReleaseHolds(ctx); n != 1 || err != nil {
				t.Fatalf("%d %v", n, err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusOpen || got.Held() || got.Decision != nil {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("an edit cannot postpone the window", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "deploy prod", Options: allowDeny()})
			*clock = clock.Add(time.Minute)
			got := patch(t, s, p, r.ID, store.Patch{Summary: str("deploy it, please")})
			if !got.Held() || !got.HoldUntil.Equal(*r.HoldUntil) {
				t.Fatalf("%+v, was until %v", got, r.HoldUntil)
			}
			if trail := actions(t, s, r.ID); !equal(trail, []string{"create/api", "hold/rule:risky", "edit/api"}) {
				t.Fatalf("trail %v", trail)
			}
		})

		t.Run("an unmatched request edited into a deny rule is denied, default option and all", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "hello", Options: allowDeny(), DefaultOption: "deny"})
			if r.Status != models.StatusOpen || r.Held() {
				t.Fatalf("%+v", r)
			}
			got := patch(t, s, p, r.ID, store.Patch{Title: str("drop table users"), DefaultOption: str("once")})
			if got.Status != models.StatusResolved || *got.Decision != "deny" || *got.DecidedVia != "rule:no-drop" {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("an unheld request edited into a hold rule is held from the edit", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "hello", Options: allowDeny()})
			*clock = clock.Add(time.Minute)
			got := patch(t, s, p, r.ID, store.Patch{Title: str("deploy now")})
			if !got.Held() || *got.HoldThen != "deny" || !got.HoldUntil.Equal(clock.Add(2*time.Minute)) {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("relabelling the deny as an allow is refused as misleading, the hold kept", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true, Title: "deploy prod", Options: allowDeny()})
			opts := []models.Option{{ID: "deny", Label: "Go ahead", Effect: "allow"}}
			if _, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Options: &opts}); models.ErrorCode(err) != models.ECodeMisleading {
				t.Fatalf("got %v, want misleading_option", err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if !got.Held() || *got.HoldThen != "deny" || got.Version != r.Version {
				t.Fatalf("%+v", got)
			}
		})
	})
}
