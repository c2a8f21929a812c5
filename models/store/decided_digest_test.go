package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// A decided record answers its decided_digest as its action digest
// (Request.API) instead of hashing itself again. That is only sound while the
// two are the same bytes' digest: for every way a request gets decided, the
// stored decided_digest must equal the digest by exclusion of the record as
// read back.
func TestDecidedDigestIsTheActionDigest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		s.Rules = rules.NewRuleSet(mustRules(t, `rules:
  - name: status
    match:
      command: '^git status$'
    action: approve
    option: once
  - name: rm
    match:
      command: '^rm '
    action: deny
    option: deny
`))
		ag := agent(t, s, "digests")
		op := voter(t, s, "olga", "ops")
		bob := voter(t, s, "bob", "release")
		dave := voter(t, s, "dave", "release")
		decide := func(r *models.Request, option string) *models.Request {
			t.Helper()
			got, err := s.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: option, By: op.Label(), Via: models.ViaAPI, Voter: &op})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		held := func(t *testing.T, r *models.Request) {
			t.Helper()
			if r.Open() || r.DecidedDigest == nil {
				t.Fatalf("%s: status %s, decided_digest %v: want a decided record", r.ID, r.Status, r.DecidedDigest)
			}
			read, err := s.GetRequest(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range []*models.Request{r, read} {
				full := rec.ActionDigest() // the definition: the record hashed less the excluded members
				if *rec.DecidedDigest != full {
					t.Fatalf("%s: decided_digest %s, the record's digest by exclusion %s", rec.ID, *rec.DecidedDigest, full)
				}
				if got := rec.API().ActionDigest; got != full {
					t.Fatalf("%s: API's action_digest %s, want %s", rec.ID, got, full)
				}
			}
		}

		t.Run("a decide", func(t *testing.T) {
			held(t, decide(file(t, s, ag, models.NewRequest{Tool: "Bash", Command: "make test", Detail: "d", Risk: "high",
				SourceRef: map[string]string{"session": "s1", "cwd": "/w"}, Options: allowDeny()}), "once"))
		})
		t.Run("a deny with a note and an answer", func(t *testing.T) {
			r := file(t, s, ag, models.NewRequest{Kind: "question", Title: "Which?", AllowAnswer: true, Options: allowDeny()})
			note, answer := "not now", "later"
			got, err := s.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: "deny", Note: &note, Answer: &answer, By: op.Label(), Via: models.ViaAPI, Voter: &op})
			if err != nil {
				t.Fatal(err)
			}
			held(t, got)
		})
		t.Run("an edit, then a decide", func(t *testing.T) {
			r := file(t, s, ag, models.NewRequest{Title: "Run: make", Unsealed: true})
			title := "Run: make install"
			edited, err := s.PatchRequest(ctx, r.ID, ag, store.Patch{Title: &title})
			if err != nil {
				t.Fatal(err)
			}
			held(t, decide(edited, "once"))
		})
		t.Run("a rule's approve and deny at filing", func(t *testing.T) {
			held(t, file(t, s, ag, models.NewRequest{Tool: "Bash", Command: "git status"}))
			held(t, file(t, s, ag, models.NewRequest{Tool: "Bash", Command: "rm -rf build"}))
		})
		t.Run("the last vote of a policy", func(t *testing.T) {
			r := file(t, s, ag, models.NewRequest{Title: "Run: deploy", Approvers: &models.Approvers{Groups: []string{"release"}, Required: 2, Note: "required"}})
			v1, err := voteAs(s, bob, r, r.Version, "once", "checked")
			if err != nil {
				t.Fatal(err)
			}
			done, err := voteAs(s, dave, v1, v1.Version, "once", "ok")
			if err != nil {
				t.Fatal(err)
			}
			held(t, done)
		})
		t.Run("a batch", func(t *testing.T) {
			rs := []*models.Request{file(t, s, ag, models.NewRequest{}), file(t, s, ag, models.NewRequest{})}
			_, outs := s.DecideEach(ctx, batchOf(op, "once", rs))
			for _, o := range outs {
				if o.Err != nil {
					t.Fatal(o.Err)
				}
				held(t, o.Request)
			}
		})
		t.Run("a remembered allow stored with the decision", func(t *testing.T) {
			r := file(t, s, ag, models.NewRequest{Tool: "Bash", Command: "go test ./...", SourceRef: map[string]string{"session": "s2"}})
			got, g, err := s.DecideRemembering(ctx, r.ID, models.Decision{Version: r.Version, Option: "once", By: op.Label(), Via: models.ViaAPI, Voter: &op},
				&store.RememberSpec{Scope: "session", For: "until_revoked"})
			if err != nil || g == nil {
				t.Fatalf("remember: %v %v", g, err)
			}
			held(t, got)
		})
	})
}
