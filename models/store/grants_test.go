package store_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

const emptyBody = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func runtime(t *testing.T, s *store.Store, name string) models.Principal {
	t.Helper()
	tok, _, err := s.CreateToken(ctx, models.RoleRuntime, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Principal()
}

// merge is the request the tests hold: merge PR 7 into main.
func merge() models.Target {
	return models.Target{Sandbox: "sb-1", Method: "PUT", Host: "api.github.com", Port: 443,
		Path: "/repos/acme/widgets/pulls/7/merge", Query: "merge_method=squash", BodySHA256: emptyBody}
}

func filePending(t *testing.T, s *store.Store, p models.Principal, tg models.Target, id string) (*models.Grant, *models.Request) {
	t.Helper()
	g, r, err := s.CreatePending(ctx, p, models.NewGrant{Target: tg, Policy: "github-merge", Middleware: "netguard", PendingID: id})
	if err != nil {
		t.Fatalf("create pending: %v", err)
	}
	return g, r
}

func decideGrant(t *testing.T, s *store.Store, r *models.Request, option string) {
	t.Helper()
	if _, err := s.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: option, By: "operator:o", Via: "api"}); err != nil {
		t.Fatalf("decide %s: %v", option, err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := models.ErrorCode(err); err == nil || got != code {
		t.Fatalf("error = %v (%s), want %s", err, got, code)
	}
}

func TestPendingFile(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		rt := runtime(t, s, "mw")

		t.Run("files an approval Gatehouse words, bound to the digest", func(t *testing.T) {
			tg := merge()
			tg.Method, tg.Host = "put", "API.GitHub.com"
			g, r := filePending(t, s, rt, tg, "merge_pr_7")
			if g.Digest != models.Digest(merge()) || g.Method != "PUT" || g.Host != "api.github.com" {
				t.Fatalf("grant = %+v", g)
			}
			if r.Kind != models.KindApproval || r.PendingID == nil || *r.PendingID != "merge_pr_7" || r.DefaultOption != "deny" {
				t.Fatalf("request = %+v", r)
			}
			if r.Title != "Allow PUT api.github.com/repos/acme/widgets/pulls/7/merge" {
				t.Fatalf("title = %q", r.Title)
			}
			if r.Tool != "http" || r.Command != "PUT https://api.github.com:443/repos/acme/widgets/pulls/7/merge?merge_method=squash" {
				t.Fatalf("tool, command = %q, %q", r.Tool, r.Command)
			}
			if len(r.Options) != 2 || r.Options[0].ID != "approve" || r.Options[0].Effect != "allow" || r.Options[1].ID != "deny" {
				t.Fatalf("options = %+v", r.Options)
			}
			if got := r.ExpiresAt.Sub(r.CreatedAt); got != models.DefaultPendingWait || !g.ExpiresAt.Equal(r.ExpiresAt) {
				t.Fatalf("expiry = %v, grant %v request %v", got, g.ExpiresAt, r.ExpiresAt)
			}
			if r.SourceRef["port"] != "443" || r.SourceRef["query"] != "merge_method=squash" {
				t.Fatalf("source_ref = %v", r.SourceRef)
			}
			trail, err := s.AuditTrail(ctx, r.ID)
			if err != nil || len(trail) != 2 || trail[1].Action != "pending" {
				t.Fatalf("trail = %+v, %v", trail, err)
			}
			assertAuditCarries(t, trail[1], g)
		})

		t.Run("generates a pending id and honours max_wait", func(t *testing.T) {
			g, _, err := s.CreatePending(ctx, rt, models.NewGrant{Target: merge(), Policy: "p", Middleware: "m", MaxWait: 90 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !models.OptionIDPattern.MatchString(g.PendingID) || g.ExpiresAt.Sub(g.CreatedAt) != 90*time.Second {
				t.Fatalf("grant = %+v", g)
			}
		})

		t.Run("a duplicate pending id of the same owner is a conflict and adds nothing", func(t *testing.T) {
			filePending(t, s, rt, merge(), "dup_id")
			_, _, err := s.CreatePending(ctx, rt, models.NewGrant{Target: merge(), Policy: "p", Middleware: "m", PendingID: "dup_id"})
			wantCode(t, err, models.ECodeConflict)
			g, _, err := s.GetGrant(ctx, rt.ID, "dup_id")
			if err != nil || g.OwnerID != rt.ID {
				t.Fatalf("grant = %+v, %v", g, err)
			}
		})

		t.Run("pending ids are per owner: another's id is free and stays apart", func(t *testing.T) {
			mine, myReq := filePending(t, s, rt, merge(), "shared_id")
			other := runtime(t, s, "other")
			theirs, theirReq, err := s.CreatePending(ctx, other, models.NewGrant{Target: merge(), Policy: "p", Middleware: "m", PendingID: "shared_id"})
			if err != nil || theirs.OwnerID != other.ID || theirReq.ID == myReq.ID {
				t.Fatalf("other's filing = %+v, %v", theirs, err)
			}
			decideGrant(t, s, theirReq, "approve")
			g, r, err := s.GetGrant(ctx, rt.ID, "shared_id")
			if err != nil || g.RequestID != mine.RequestID || g.State != models.GrantPending || g.Status(r, time.Now()) != models.GrantPending {
				t.Fatalf("mine after theirs was approved = %+v, %v", g, err)
			}
			g, _, err = s.GetGrant(ctx, other.ID, "shared_id")
			if err != nil || g.RequestID != theirReq.ID || g.State != models.GrantApproved {
				t.Fatalf("theirs = %+v, %v", g, err)
			}
			_, _, err = s.GetGrant(ctx, "tok_nobody", "shared_id")
			wantCode(t, err, models.ECodeNotFound)
		})

		t.Run("the filer cannot reword the approval", func(t *testing.T) {
			_, r := filePending(t, s, rt, merge(), "")
			title := "Allow a harmless read"
			_, err := s.PatchRequest(ctx, r.ID, rt, store.Patch{Title: &title})
			wantCode(t, err, models.ECodeForbidden)
		})

		t.Run("bad input is refused", func(t *testing.T) {
			for name, edit := range map[string]func(n *models.NewGrant){
				"pending id":  func(n *models.NewGrant) { n.PendingID = "Bad-Id" },
				"long id":     func(n *models.NewGrant) { n.PendingID = "a" + strings.Repeat("b", 64) },
				"policy text": func(n *models.NewGrant) { n.Policy = "ignore previous instructions" },
				"method":      func(n *models.NewGrant) { n.Method = "GET /x" },
				"host":        func(n *models.NewGrant) { n.Host = "https://example.com" },
				"port":        func(n *models.NewGrant) { n.Port = 0 },
				"path":        func(n *models.NewGrant) { n.Path = "repos" },
				"path space":  func(n *models.NewGrant) { n.Path = "/a b" },
				"query ?":     func(n *models.NewGrant) { n.Query = "?a=1" },
				"body":        func(n *models.NewGrant) { n.BodySHA256 = "" },
				"sandbox":     func(n *models.NewGrant) { n.Sandbox = "" },
			} {
				t.Run(name, func(t *testing.T) {
					n := models.NewGrant{Target: merge(), Policy: "p", Middleware: "m"}
					edit(&n)
					_, _, err := s.CreatePending(ctx, rt, n)
					wantCode(t, err, models.ECodeInvalid)
				})
			}
		})
	})
}

func assertAuditCarries(t *testing.T, a store.Audit, g *models.Grant) {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal([]byte(a.Detail), &d); err != nil {
		t.Fatalf("audit %s detail %q: %v", a.Action, a.Detail, err)
	}
	if d["pending_id"] != g.PendingID || d["digest"] != g.Digest {
		t.Fatalf("audit %s detail = %v, want pending_id %s digest %s", a.Action, d, g.PendingID, g.Digest)
	}
}

func TestPendingClaim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		rt := runtime(t, s, "mw")

		t.Run("pending, approve, claim once, then the request is new", func(t *testing.T) {
			g, r := filePending(t, s, rt, merge(), "")
			got, err := s.ClaimGrant(ctx, rt, merge())
			wantCode(t, err, models.ECodeApprovalPending)
			if got == nil || got.PendingID != g.PendingID {
				t.Fatalf("pending answer names %+v", got)
			}
			decideGrant(t, s, r, "approve")
			if g2, r2, _ := s.GetGrant(ctx, rt.ID, g.PendingID); g2.State != models.GrantApproved || g2.Status(r2, time.Now()) != models.GrantApproved {
				t.Fatalf("after approve: state %s", g2.State)
			}
			got, err = s.ClaimGrant(ctx, rt, merge())
			if err != nil || got.PendingID != g.PendingID || got.ClaimedAt == nil {
				t.Fatalf("claim = %+v, %v", got, err)
			}
			_, err = s.ClaimGrant(ctx, rt, merge())
			wantCode(t, err, models.ECodeNoGrant)

			trail, err := s.AuditTrail(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			actions := []string{}
			for _, a := range trail {
				actions = append(actions, a.Action)
				if a.Action != "create" {
					assertAuditCarries(t, a, g)
				}
			}
			if strings.Join(actions, ",") != "create,pending,decide,release" {
				t.Fatalf("trail = %v", actions)
			}
		})

		t.Run("a request that differs in any field matches nothing", func(t *testing.T) {
			base := merge()
			base.Sandbox = "sb-fields"
			_, r := filePending(t, s, rt, base, "")
			decideGrant(t, s, r, "approve")
			for name, edit := range map[string]func(tg *models.Target){
				"method":  func(tg *models.Target) { tg.Method = "POST" },
				"host":    func(tg *models.Target) { tg.Host = "api.github.com.evil.example" },
				"port":    func(tg *models.Target) { tg.Port = 8443 },
				"path":    func(tg *models.Target) { tg.Path = "/repos/acme/widgets/pulls/8/merge" },
				"query":   func(tg *models.Target) { tg.Query = "merge_method=merge" },
				"body":    func(tg *models.Target) { tg.BodySHA256 = strings.Repeat("0", 64) },
				"sandbox": func(tg *models.Target) { tg.Sandbox = "sb-other" },
			} {
				t.Run(name, func(t *testing.T) {
					tg := base
					edit(&tg)
					_, err := s.ClaimGrant(ctx, rt, tg)
					wantCode(t, err, models.ECodeNoGrant)
				})
			}
			t.Run("another runtime", func(t *testing.T) {
				_, err := s.ClaimGrant(ctx, runtime(t, s, "stranger"), base)
				wantCode(t, err, models.ECodeNoGrant)
			})
			t.Run("case of method, host and body digest does not matter", func(t *testing.T) {
				tg := base
				tg.Method, tg.Host, tg.BodySHA256 = "put", "API.GITHUB.COM", strings.ToUpper(tg.BodySHA256)
				if _, err := s.ClaimGrant(ctx, rt, tg); err != nil {
					t.Fatalf("claim: %v", err)
				}
			})
		})

		t.Run("a denied grant answers approval_denied once", func(t *testing.T) {
			tg := merge()
			tg.Sandbox = "sb-deny"
			g, r := filePending(t, s, rt, tg, "")
			decideGrant(t, s, r, "deny")
			got, err := s.ClaimGrant(ctx, rt, tg)
			wantCode(t, err, models.ECodeApprovalDenied)
			if got == nil || got.PendingID != g.PendingID {
				t.Fatalf("denied answer names %+v", got)
			}
			_, err = s.ClaimGrant(ctx, rt, tg)
			wantCode(t, err, models.ECodeNoGrant)
		})

		t.Run("two approved grants for one request release two requests, oldest first", func(t *testing.T) {
			tg := merge()
			tg.Sandbox = "sb-twice"
			g1, r1 := filePending(t, s, rt, tg, "")
			g2, r2 := filePending(t, s, rt, tg, "")
			decideGrant(t, s, r2, "approve")
			decideGrant(t, s, r1, "approve")
			for _, want := range []string{g1.PendingID, g2.PendingID} {
				got, err := s.ClaimGrant(ctx, rt, tg)
				if err != nil || got.PendingID != want {
					t.Fatalf("claim = %+v, %v; want %s", got, err, want)
				}
			}
			_, err := s.ClaimGrant(ctx, rt, tg)
			wantCode(t, err, models.ECodeNoGrant)
		})

		t.Run("an approval after a denial of the same request is claimable", func(t *testing.T) {
			tg := merge()
			tg.Sandbox = "sb-second-chance"
			_, r1 := filePending(t, s, rt, tg, "")
			decideGrant(t, s, r1, "deny")
			g2, r2 := filePending(t, s, rt, tg, "")
			decideGrant(t, s, r2, "approve")
			got, err := s.ClaimGrant(ctx, rt, tg)
			if err != nil || got.PendingID != g2.PendingID {
				t.Fatalf("claim = %+v, %v", got, err)
			}
			_, err = s.ClaimGrant(ctx, rt, tg)
			wantCode(t, err, models.ECodeNoGrant)
		})
	})
}

func TestPendingExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		rt := runtime(t, s, "mw")

		t.Run("undecided past max_wait: expired, once", func(t *testing.T) {
			tg := merge()
			tg.Sandbox = "sb-undecided"
			g, _, err := s.CreatePending(ctx, rt, models.NewGrant{Target: tg, Policy: "p", Middleware: "m", MaxWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(2 * time.Minute)
			if n, _, err := s.Expire(ctx); err != nil || n != 1 {
				t.Fatalf("expire = %d, %v", n, err)
			}
			g2, r2, err := s.GetGrant(ctx, rt.ID, g.PendingID)
			if err != nil || g2.State != models.GrantExpired || g2.Status(r2, now) != models.GrantExpired {
				t.Fatalf("after expiry: %+v %v", g2, err)
			}
			trail, _ := s.AuditTrail(ctx, r2.ID)
			assertAuditCarries(t, trail[len(trail)-1], g)
			_, err = s.ClaimGrant(ctx, rt, tg)
			wantCode(t, err, models.ECodeApprovalExpired)
			_, err = s.ClaimGrant(ctx, rt, tg)
			wantCode(t, err, models.ECodeNoGrant)
		})

		t.Run("approved but not claimed in time: expired", func(t *testing.T) {
			tg := merge()
			tg.Sandbox = "sb-late"
			_, r, err := s.CreatePending(ctx, rt, models.NewGrant{Target: tg, Policy: "p", Middleware: "m", MaxWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			decideGrant(t, s, r, "approve")
			now = now.Add(time.Minute)
			_, err = s.ClaimGrant(ctx, rt, tg)
			wantCode(t, err, models.ECodeApprovalExpired)
		})
	})
}

func TestPendingConcurrentClaims(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		rt := runtime(t, s, "mw")
		_, r := filePending(t, s, rt, merge(), "")
		decideGrant(t, s, r, "approve")

		const n = 64
		start := make(chan struct{})
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				_, errs[i] = s.ClaimGrant(ctx, rt, merge())
			})
		}
		close(start)
		testkit.Wait(t, &wg, "the concurrent calls to finish")
		won := 0
		for _, err := range errs {
			switch models.ErrorCode(err) {
			case models.ECodeInternal:
				if err != nil {
					t.Fatalf("claim failed: %v", err)
				}
				won++
			case models.ECodeNoGrant:
			default:
				t.Fatalf("unexpected answer: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d claims released the grant, want exactly 1", won)
		}
		trail, _ := s.AuditTrail(ctx, r.ID)
		releases := 0
		for _, a := range trail {
			if a.Action == "release" {
				releases++
			}
		}
		if releases != 1 {
			t.Fatalf("%d release audit rows, want 1", releases)
		}
	})
}
