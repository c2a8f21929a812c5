package store_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// chained returns a store whose chain holds n entries (n creates).
func chained(t *testing.T, dialect string, n int) *store.Store {
	t.Helper()
	s, _ := storetest.Store(t, dialect)
	addEntries(t, s, n)
	return s
}

func addEntries(t *testing.T, s *store.Store, n int) {
	t.Helper()
	p := models.Principal{ID: "tok_a", Role: models.RoleAgent, Name: "a"}
	for i := 0; i < n; i++ {
		file(t, s, p, models.NewRequest{Kind: models.KindPermission, Title: fmt.Sprintf("step %d", i)})
	}
}

// brokenAt verifies s and returns the seq the chain is reported broken at
// (0 when it verifies).
func brokenAt(t *testing.T, s *store.Store, head *store.SignedHead) uint64 {
	t.Helper()
	_, err := s.VerifyAudit(ctx, head)
	var ce *store.ChainError
	if errors.As(err, &ce) {
		t.Logf("caught: %v", ce)
		return ce.Seq
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func exec(t *testing.T, s *store.Store, q string, args ...any) {
	t.Helper()
	if err := s.DB.Exec(q, args...).Error; err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func row(t *testing.T, s *store.Store, seq uint64) store.Audit {
	t.Helper()
	var a store.Audit
	if err := s.DB.Where("seq = ?", seq).Take(&a).Error; err != nil {
		t.Fatal(err)
	}
	return a
}

// rechain recomputes every hash of chain 0 from seq on and moves the
// recorded head, as someone with write access to the database (and no signing
// key) can.
func rechain(t *testing.T, s *store.Store, from uint64) { rechainOn(t, s, 0, from) }

// rechainOn is rechain on one chain.
func rechainOn(t *testing.T, s *store.Store, chain uint32, from uint64) {
	t.Helper()
	prev := store.ZeroHash
	var rows []store.Audit
	if err := s.DB.Where("chain = ? AND seq >= ?", chain, from-1).Order("seq").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if from > 1 {
		prev, rows = rows[0].Hash, rows[1:]
	}
	last := store.AuditEntry{Hash: store.ZeroHash}
	for _, a := range rows {
		a.PrevHash = prev
		h, err := a.Entry().ComputeHash()
		if err != nil {
			t.Fatal(err)
		}
		exec(t, s, "UPDATE audits SET prev_hash = ?, hash = ? WHERE id = ?", prev, h, a.ID)
		a.Hash, prev = h, h
		last = a.Entry()
	}
	if len(rows) == 0 && from > 1 { // cut back to from-1
		var a store.Audit
		if err := s.DB.Where("chain = ? AND seq = ?", chain, from-1).Take(&a).Error; err != nil {
			t.Fatal(err)
		}
		last = a.Entry()
	}
	exec(t, s, "UPDATE audit_head SET seq = ?, hash = ?, at = ? WHERE id = ?", last.Seq, last.Hash, last.At, int(chain)+1)
}

func TestAuditChain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("every change links one entry: seq from 1, prev_hash the entry before", func(t *testing.T) {
			s, _ := storetest.Store(t, dialect)
			owner := agent(t, s, "a")
			r := file(t, s, owner, models.NewRequest{Kind: models.KindPermission})
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: "once", By: "operator:o", Via: models.ViaAPI}); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendAudit(ctx, r.ID, 2, "forward", "system", "push", map[string]any{"attempt": 1, "result": "delivered"}); err != nil {
				t.Fatal(err)
			}
			rows, err := s.AuditEntries(ctx, 0, 0, 100)
			if err != nil || len(rows) != 3 {
				t.Fatalf("%d entries %v, want 3", len(rows), err)
			}
			prev := store.ZeroHash
			for i, a := range rows {
				e := a.Entry()
				if e.Seq != uint64(i+1) || e.PrevHash != prev || len(e.Hash) != 64 || !strings.HasSuffix(e.At, "Z") || len(e.At) != len("2006-01-02T15:04:05.000000Z") {
					t.Fatalf("entry %d: %+v", i, e)
				}
				prev = e.Hash
			}
			var d map[string]any
			if err := json.Unmarshal(rows[2].Entry().Detail, &d); err != nil || d["result"] != "delivered" {
				t.Fatalf("forward detail %s", rows[2].Detail)
			}
			v, err := s.VerifyAudit(ctx, nil)
			if err != nil || v.N != 3 || v.Chain(0).Hash != prev {
				t.Fatalf("verify: %+v %v", v, err)
			}
		})

		t.Run("an edit's entry holds each changed field before and after", func(t *testing.T) {
			s, _ := storetest.Store(t, dialect)
			owner := agent(t, s, "a")
			r := file(t, s, owner, models.NewRequest{Kind: models.KindPermission, Title: "Run rm -rf build", Unsealed: true})
			title := "Status update: green"
			if _, err := s.PatchRequest(ctx, r.ID, owner, store.Patch{Title: &title}); err != nil {
				testkit.Skipf(t, "this request cannot be edited here: %v", err)
			}
			trail, _ := s.AuditTrail(ctx, r.ID)
			var edit *store.Audit
			for i := range trail {
				if trail[i].Action == "edit" {
					edit = &trail[i]
				}
			}
			if edit == nil {
				t.Fatalf("no edit entry in %+v", trail)
			}
			var d map[string]map[string]any
			if err := json.Unmarshal([]byte(edit.Detail), &d); err != nil {
				t.Fatal(err)
			}
			if d["title"]["before"] != "Run rm -rf build" || d["title"]["after"] != title || len(d) != 1 {
				t.Fatalf("edit detail %s, want the title before and after only", edit.Detail)
			}
		})

		t.Run("a changed entry is named", func(t *testing.T) {
			s := chained(t, dialect, 5)
			exec(t, s, "UPDATE audits SET actor = ? WHERE seq = 3", "operator:mallory")
			if got := brokenAt(t, s, nil); got != 3 {
				t.Fatalf("broken at %d, want 3", got)
			}
		})

		t.Run("a changed detail is named", func(t *testing.T) {
			s := chained(t, dialect, 5)
			exec(t, s, "UPDATE audits SET detail = ? WHERE seq = 2", `{"decision":"once"}`)
			if got := brokenAt(t, s, nil); got != 2 {
				t.Fatalf("broken at %d, want 2", got)
			}
		})

		t.Run("a deleted entry is named", func(t *testing.T) {
			s := chained(t, dialect, 5)
			exec(t, s, "DELETE FROM audits WHERE seq = 3")
			if got := brokenAt(t, s, nil); got != 3 {
				t.Fatalf("broken at %d, want 3", got)
			}
		})

		t.Run("reordered entries are named", func(t *testing.T) {
			s := chained(t, dialect, 5)
			exec(t, s, "UPDATE audits SET seq = 1000 WHERE seq = 2")
			exec(t, s, "UPDATE audits SET seq = 2 WHERE seq = 3")
			exec(t, s, "UPDATE audits SET seq = 3 WHERE seq = 1000")
			if got := brokenAt(t, s, nil); got != 2 {
				t.Fatalf("broken at %d, want 2", got)
			}
		})

		t.Run("an entry appended by hand is named", func(t *testing.T) {
			s := chained(t, dialect, 5)
			last := row(t, s, 5)
			forged := store.Audit{Seq: 6, RequestID: last.RequestID, Version: 2, Action: "decide", Actor: "operator:o",
				Via: "api", Detail: `{"decision":"once"}`, CreatedAt: last.CreatedAt, PrevHash: last.Hash, Hash: strings.Repeat("f", 64)}
			if err := s.DB.Create(&forged).Error; err != nil {
				t.Fatal(err)
			}
			if got := brokenAt(t, s, nil); got != 6 {
				t.Fatalf("broken at %d, want 6", got)
			}
			// Even with a correct hash, the head the server recorded does not reach it.
			h, err := forged.Entry().ComputeHash()
			if err != nil {
				t.Fatal(err)
			}
			exec(t, s, "UPDATE audits SET hash = ? WHERE seq = 6", h)
			if got := brokenAt(t, s, nil); got != 6 {
				t.Fatalf("well-hashed forgery: broken at %d, want 6", got)
			}
		})

		t.Run("a row written without seq is caught", func(t *testing.T) {
			s := chained(t, dialect, 3)
			exec(t, s, "INSERT INTO audits (request_id, version, action, actor, via, detail, created_at) VALUES ('req_x', 1, 'decide', 'operator:o', 'api', '', ?)", time.Now().UTC())
			if got := brokenAt(t, s, nil); got != 4 {
				t.Fatalf("broken at %d, want 4", got)
			}
		})

		t.Run("a head saved earlier catches a cut-off tail", func(t *testing.T) {
			s := chained(t, dialect, 5)
			saved, err := s.AuditHead(ctx)
			if err != nil || saved.Chains[0].Seq != 5 {
				t.Fatalf("head %+v %v", saved, err)
			}
			addEntries(t, s, 3)
			exec(t, s, "DELETE FROM audits WHERE seq >= 4")
			rechain(t, s, 3) // the recorded head moved back too: on its own the chain looks whole
			if got := brokenAt(t, s, nil); got != 0 {
				t.Fatalf("without a saved head: broken at %d, want it to verify", got)
			}
			if got := brokenAt(t, s, saved); got != 4 {
				t.Fatalf("with the saved head: broken at %d, want 4", got)
			}
		})

		t.Run("a head saved earlier catches a rewritten tail", func(t *testing.T) {
			s := chained(t, dialect, 5)
			saved, err := s.AuditHead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			addEntries(t, s, 2)
			exec(t, s, "UPDATE audits SET actor = ? WHERE seq = 5", "operator:mallory")
			rechain(t, s, 5)
			if got := brokenAt(t, s, nil); got != 0 {
				t.Fatalf("without a saved head: broken at %d, want it to verify", got)
			}
			if got := brokenAt(t, s, saved); got != 5 {
				t.Fatalf("with the saved head: broken at %d, want 5", got)
			}
			if got := brokenAt(t, s, &store.SignedHead{Seq: 7, Hash: row(t, s, 7).Hash, At: row(t, s, 7).Entry().At}); got != 0 {
				t.Fatalf("a head of the rewritten chain itself: broken at %d", got)
			}
		})

		t.Run("the head is signed by the server key and by no other", func(t *testing.T) {
			s := chained(t, dialect, 2)
			h, err := s.AuditHead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			k, err := s.SigningKey(ctx)
			if err != nil || h.KeyID != k.ID {
				t.Fatalf("head key %s, server key %+v %v", h.KeyID, k, err)
			}
			if err := h.Verify(k.Public); err != nil {
				t.Fatalf("with the server key: %v", err)
			}
			other, _, _ := ed25519.GenerateKey(rand.Reader)
			if err := h.Verify(other); !errors.Is(err, store.ErrHeadSignature) {
				t.Fatalf("with another key: %v", err)
			}
			moved := *h
			moved.Chains = append([]store.ChainHead(nil), h.Chains...)
			moved.Chains[0].Seq++
			if err := moved.Verify(k.Public); !errors.Is(err, store.ErrHeadSignature) {
				t.Fatalf("a head moved on: %v", err)
			}
		})

		t.Run("two replicas appending at once keep every chain whole", func(t *testing.T) {
			url := storetest.URL(t, dialect)
			replicas := make([]*store.Store, 2)
			for i := range replicas {
				db := storetest.Open(t, url)
				if err := store.MigrateLocked(db); err != nil {
					t.Fatal(err)
				}
				replicas[i] = store.NewStore(db, nil)
			}
			const writers, each = 8, 25
			p := models.Principal{ID: "tok_a", Role: models.RoleAgent, Name: "a"}
			var wg sync.WaitGroup
			errs := make(chan error, 2*writers*each)
			for _, s := range replicas {
				for w := 0; w < writers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < each; i++ {
							if _, _, err := s.CreateRequest(ctx, p, models.NewRequest{Kind: models.KindPermission, Title: "x", Options: allowDeny()}, ""); err != nil {
								errs <- err
							}
						}
					}()
				}
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("concurrent appenders did not finish within 2 minutes")
			}
			close(errs)
			for err := range errs {
				t.Fatalf("append: %v", err)
			}
			v, err := replicas[1].VerifyAudit(ctx, nil)
			if err != nil || v.N != 2*writers*each {
				t.Fatalf("verify: %d entries %v, want %d", v.N, err, 2*writers*each)
			}
		})

		t.Run("old rows are chained once at migration and verify", func(t *testing.T) {
			db := storetest.Open(t, storetest.URL(t, dialect))
			if err := db.AutoMigrate(&legacyAudit{}); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
			for i := 0; i < 4; i++ {
				if err := db.Create(&legacyAudit{RequestID: "req_old", Version: 1, Action: "create", Actor: "agent:a", Via: "api", CreatedAt: at.Add(time.Duration(i) * time.Second)}).Error; err != nil {
					t.Fatal(err)
				}
			}
			if err := store.Migrate(db); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			if err := store.Migrate(db); err != nil {
				t.Fatalf("migrate again: %v", err)
			}
			s := store.NewStore(db, nil)
			v, err := s.VerifyAudit(ctx, nil)
			if err != nil || v.N != 4 {
				t.Fatalf("verify after migration: %+v %v", v, err)
			}
			addEntries(t, s, 1)
			if v, err := s.VerifyAudit(ctx, nil); err != nil || v.N != 5 {
				t.Fatalf("verify after a new entry: %+v %v", v, err)
			}
		})
	})
}

// legacyAudit is the audits table as builds before the chain made it.
type legacyAudit struct {
	ID        uint64 `gorm:"primaryKey;autoIncrement"`
	RequestID string `gorm:"size:40;index"`
	Version   int    `gorm:"not null"`
	Action    string `gorm:"size:32;not null"`
	Actor     string `gorm:"size:200;not null"`
	Via       string `gorm:"size:200"`
	Detail    string
	CreatedAt time.Time `gorm:"not null"`
}

func (legacyAudit) TableName() string { return "audits" }
