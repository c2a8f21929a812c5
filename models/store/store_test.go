package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

var ctx = context.Background()

func allowDeny() []models.Option {
	return []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
}

func agent(t *testing.T, s *store.Store, name string) models.Principal {
	t.Helper()
	tok, _, err := s.CreateToken(ctx, models.RoleAgent, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Principal()
}

func file(t *testing.T, s *store.Store, p models.Principal, n models.NewRequest) *models.Request {
	t.Helper()
	if n.Title == "" {
		n.Title = "Run git push"
	}
	if n.Options == nil {
		n.Options = allowDeny()
	}
	r, created, err := s.CreateRequest(ctx, p, n, "")
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	return r
}

func TestDecide(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		p := agent(t, s, "a1")

		t.Run("two concurrent decides on one version: one winner", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{})
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					opt := "once"
					if i%2 == 1 {
						opt = "deny"
					}
					_, errs[i] = s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: opt, By: "operator:x", Via: "api"})
				}(i)
			}
			testkit.Wait(t, &wg, "the concurrent calls to finish")
			wins := 0
			for _, err := range errs {
				switch models.ErrorCode(err) {
				case models.ECodeInternal:
					if err != nil {
						t.Fatalf("unexpected: %v", err)
					}
					wins++
				case models.ECodeAlreadyDecided, models.ECodeVersionConflict:
				default:
					t.Fatalf("unexpected code: %v", err)
				}
			}
			if wins != 1 {
				t.Fatalf("wins = %d, want 1", wins)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusResolved || got.Version != 2 {
				t.Fatalf("got %s v%d", got.Status, got.Version)
			}
		})

		t.Run("stale version, option not offered, expired", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true})
			_, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "always"})
			if models.ErrorCode(err) != models.ECodeNotOffered {
				t.Fatalf("not offered: %v", err)
			}
			if _, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Summary: ptr("new")}); err != nil {
				t.Fatal(err)
			}
			_, err = s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once"})
			var e *models.Error
			if models.ErrorCode(err) != models.ECodeVersionConflict {
				t.Fatalf("stale: %v", err)
			}
			_ = e
			s2 := *s
			s2.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
			_, err = s2.Decide(ctx, r.ID, models.Decision{Version: 2, Option: "once"})
			if models.ErrorCode(err) != models.ECodeExpired {
				t.Fatalf("expired: %v", err)
			}
		})

		t.Run("a decide wakes a watcher", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{})
			w, stop := changes.Watch(r.ID)
			defer stop()
			go s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "deny", By: "operator:x", Via: "api"})
			testkit.Recv(t, w, "the wait's answer")
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Decision == nil || *got.Decision != "deny" {
				t.Fatalf("decision %v", got.Decision)
			}
		})
	})
}

func TestExpire(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "a1")
		withDefault := file(t, s, p, models.NewRequest{DefaultOption: "deny", ExpiresIn: time.Minute})
		without := file(t, s, p, models.NewRequest{ExpiresIn: time.Minute})
		later := file(t, s, p, models.NewRequest{ExpiresIn: 10 * time.Minute})
		s.Now = func() time.Time { return time.Now().UTC().Add(2 * time.Minute) }
		n, next, err := s.Expire(ctx)
		if err != nil || n != 2 {
			t.Fatalf("expire: %d %v", n, err)
		}
		if !next.Equal(later.ExpiresAt) {
			t.Fatalf("next %v want %v", next, later.ExpiresAt)
		}
		a, _ := s.GetRequest(ctx, withDefault.ID)
		if a.Status != models.StatusResolved || *a.Decision != "deny" || *a.DecidedVia != "expiry" {
			t.Fatalf("with default: %+v", a)
		}
		b, _ := s.GetRequest(ctx, without.ID)
		if b.Status != models.StatusExpired || b.Decision != nil {
			t.Fatalf("without: %+v", b)
		}
		if n, _, _ := s.Expire(ctx); n != 0 {
			t.Fatalf("second sweep settled %d", n)
		}
	})
}

func TestIdempotency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "a1")
		n := models.NewRequest{Title: "t", Options: allowDeny()}
		a, created, err := s.CreateRequest(ctx, p, n, "k1")
		if err != nil || !created {
			t.Fatal(err)
		}
		trail := func(t *testing.T) int {
			t.Helper()
			entries, err := s.AuditTrail(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(entries)
		}
		audited := trail(t)
		t.Run("a retry answers the first record and writes nothing", func(t *testing.T) {
			b, created, err := s.CreateRequest(ctx, p, n, "k1")
			if err != nil || created || b.ID != a.ID {
				t.Fatalf("retry: %v %v %v", b, created, err)
			}
			if got := trail(t); got != audited {
				t.Fatalf("the retry left %d audit entries on the first record, want %d", got, audited)
			}
		})
		// A key names one filing: the agent that guesses or reads a hook's key
		// and files first cannot make the hook's filing answer its record, and
		// a retry with another body never answers the first one's decision.
		t.Run("a key repeated with another body is refused and changes nothing", func(t *testing.T) {
			long := n
			long.ExpiresIn = s.MaxExpiry + time.Hour
			rt := n
			rt.RuntimeID = ptr("rt_nobody")
			other := n
			other.Title, other.Tool, other.Command = "Run: rm -rf /", "Bash", "rm -rf /"
			risky := n // the pre-claim: the same action with a field a rule matches on
			risky.Risk = "low"
			for name, body := range map[string]models.NewRequest{"expiry over the maximum": long, "a runtime it does not own": rt, "another command": other, "a risk added": risky} {
				b, created, err := s.CreateRequest(ctx, p, body, "k1")
				if models.ErrorCode(err) != models.ECodeKeyReused || b != nil || created {
					t.Fatalf("%s: %+v %v %v, want %s", name, b, created, err, models.ECodeKeyReused)
				}
			}
			if got := trail(t); got != audited {
				t.Fatalf("refused repeats left %d audit entries, want %d", got, audited)
			}
			if first, _ := s.GetRequest(ctx, a.ID); first.Version != a.Version || first.Title != a.Title {
				t.Fatalf("the first record changed: %+v", first)
			}
		})
		t.Run("another owner's key is its own", func(t *testing.T) {
			other := agent(t, s, "a2")
			c, created, err := s.CreateRequest(ctx, other, n, "k1")
			if err != nil || !created || c.ID == a.ID {
				t.Fatalf("another owner's key is its own: %v %v", created, err)
			}
		})
	})
}

func ptr[T any](v T) *T { return &v }
