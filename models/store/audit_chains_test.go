package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/jackc/pgx/v5"
)

// multiChained returns a store whose trail holds 5 entries on chain 0, 3 on
// chain 1 and 1 on chain 3.
func multiChained(t *testing.T, dialect string) *store.Store {
	t.Helper()
	s := chained(t, dialect, 5)
	for range 3 {
		storetest.AppendOnChain(t, s, 1, "req_on1")
	}
	storetest.AppendOnChain(t, s, 3, "req_on3")
	return s
}

// brokenOn verifies s and returns where the trail is reported broken (chain,
// seq); ok false when it verifies.
func brokenOn(t *testing.T, s *store.Store, head *store.SignedHead) (chain uint32, seq uint64, ok bool) {
	t.Helper()
	_, err := s.VerifyAudit(ctx, head)
	var ce *store.ChainError
	if errors.As(err, &ce) {
		t.Logf("caught: %v", ce)
		return ce.Chain, ce.Seq, true
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, 0, false
}

func wantBroken(t *testing.T, s *store.Store, head *store.SignedHead, chain uint32, seq uint64) {
	t.Helper()
	c, n, broken := brokenOn(t, s, head)
	if !broken || c != chain || n != seq {
		t.Fatalf("broken %v at chain %d seq %d, want chain %d seq %d", broken, c, n, chain, seq)
	}
}

func TestAuditChains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("entries on several chains verify and the head signs every chain", func(t *testing.T) {
			s := multiChained(t, dialect)
			v, err := s.VerifyAudit(ctx, nil)
			if err != nil || v.N != 9 || v.Chain(1).Seq != 3 || v.Chain(3).Seq != 1 || len(v.Chains()) != 3 {
				t.Fatalf("verify: %+v %v", v, err)
			}
			h, err := s.AuditHead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Chains) != store.AuditChains {
				t.Fatalf("head names %d chains, want %d", len(h.Chains), store.AuditChains)
			}
			for i, c := range h.Chains {
				if want := v.Chain(uint32(i)); c.Chain != uint32(i) || c.Seq != want.Seq || c.Hash != want.Hash {
					t.Fatalf("head chain %d: %+v, verified %+v", i, c, want)
				}
			}
			k, err := s.SigningKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Verify(k.Public); err != nil {
				t.Fatal(err)
			}
			for i := range h.Chains { // no chain's line can be moved without the key
				moved := *h
				moved.Chains = append([]store.ChainHead(nil), h.Chains...)
				moved.Chains[i].Seq++
				if err := moved.Verify(k.Public); !errors.Is(err, store.ErrHeadSignature) {
					t.Fatalf("chain %d moved on: %v", i, err)
				}
			}
		})

		t.Run("a changed entry on chain 1 is named by chain and seq", func(t *testing.T) {
			s := multiChained(t, dialect)
			exec(t, s, "UPDATE audits SET actor = ? WHERE chain = 1 AND seq = 2", "operator:mallory")
			wantBroken(t, s, nil, 1, 2)
		})

		t.Run("a deleted entry on chain 1 is named", func(t *testing.T) {
			s := multiChained(t, dialect)
			exec(t, s, "DELETE FROM audits WHERE chain = 1 AND seq = 2")
			wantBroken(t, s, nil, 1, 2)
		})

		t.Run("reordered entries on chain 1 are named", func(t *testing.T) {
			s := multiChained(t, dialect)
			exec(t, s, "UPDATE audits SET seq = 1000 WHERE chain = 1 AND seq = 1")
			exec(t, s, "UPDATE audits SET seq = 1 WHERE chain = 1 AND seq = 2")
			exec(t, s, "UPDATE audits SET seq = 2 WHERE chain = 1 AND seq = 1000")
			wantBroken(t, s, nil, 1, 1)
		})

		t.Run("an entry moved to another chain is named", func(t *testing.T) {
			s := multiChained(t, dialect)
			exec(t, s, "UPDATE audits SET chain = 2, seq = 1 WHERE chain = 1 AND seq = 3")
			exec(t, s, "UPDATE audit_head SET seq = 1, hash = (SELECT hash FROM audits WHERE chain = 2 AND seq = 1) WHERE id = 3")
			wantBroken(t, s, nil, 1, 3) // chain 1's head still records it
			rechainOn(t, s, 1, 3)
			wantBroken(t, s, nil, 2, 1) // its hash covers the chain it was written on
		})

		t.Run("an entry on a chain with no head is caught", func(t *testing.T) {
			s := multiChained(t, dialect)
			exec(t, s, "INSERT INTO audits (chain, seq, request_id, version, action, actor, via, detail, created_at, prev_hash, hash) VALUES (?, 1, 'req_x', 1, 'decide', 'operator:o', 'api', '{}', ?, ?, ?)",
				store.AuditChains+4, time.Now().UTC(), store.ZeroHash, store.ZeroHash)
			wantBroken(t, s, nil, store.AuditChains+4, 1)
		})

		t.Run("a chain's head row deleted is caught", func(t *testing.T) {
			s := multiChained(t, dialect)
			exec(t, s, "DELETE FROM audit_head WHERE id = 2")
			wantBroken(t, s, nil, 1, 1)
		})

		t.Run("one chain cut off is caught by a saved head, the others intact", func(t *testing.T) {
			s := multiChained(t, dialect)
			saved, err := s.AuditHead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				storetest.AppendOnChain(t, s, 1, "req_on1")
			}
			addEntries(t, s, 1)
			exec(t, s, "DELETE FROM audits WHERE chain = 1 AND seq >= 3")
			rechainOn(t, s, 1, 3) // chain 1's recorded head moved back to seq 2
			if _, _, broken := brokenOn(t, s, nil); broken {
				t.Fatal("without a saved head the cut chain was caught: the test cannot tell the head did it")
			}
			wantBroken(t, s, saved, 1, 3)
		})

		t.Run("one chain rewritten is caught by a saved head", func(t *testing.T) {
			s := multiChained(t, dialect)
			saved, err := s.AuditHead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			exec(t, s, "UPDATE audits SET actor = ? WHERE chain = 1 AND seq = 3", "operator:mallory")
			rechainOn(t, s, 1, 3)
			if _, _, broken := brokenOn(t, s, nil); broken {
				t.Fatal("the rewrite was caught without a saved head")
			}
			wantBroken(t, s, saved, 1, 3)
		})
	})
}

// A database made by the build before there were several chains (one chain,
// seq unique over it, one head row) migrates, verifies as it did, keeps
// verifying against the head saved from that build, and takes new chains.
func TestAuditChainsMigrateOneChainDatabase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		url := oneChainFixture(t, dialect)
		b, err := os.ReadFile(filepath.Join("testdata", "audit-one-chain."+dialect+".head.json"))
		if err != nil {
			t.Fatal(err)
		}
		var old store.SignedHead
		if err := json.Unmarshal(b, &old); err != nil || len(old.Chains) != 0 || old.Seq != 10 {
			t.Fatalf("the saved head: %+v %v", old, err)
		}
		db := storetest.Open(t, url)
		if err := store.Migrate(db); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		s := store.NewStore(db, nil)
		k, err := s.PublicKey(ctx, old.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		if err := old.Verify(k); err != nil {
			t.Fatalf("the head the old build signed: %v", err)
		}
		v, err := s.VerifyAudit(ctx, &old)
		if err != nil || v.N != 10 || v.Chain(0).Hash != old.Hash || len(v.Chains()) != 1 {
			t.Fatalf("verify after migration: %+v %v", v, err)
		}
		addEntries(t, s, 2)
		storetest.AppendOnChain(t, s, 1, "req_new")
		if v, err := s.VerifyAudit(ctx, &old); err != nil || v.N != 13 || v.Chain(0).Seq != 12 || v.Chain(1).Seq != 1 {
			t.Fatalf("verify after new entries: %+v %v", v, err)
		}
		h, err := s.AuditHead(ctx)
		if err != nil || len(h.Chains) != store.AuditChains || h.Chains[0].Seq != 12 || h.Chains[1].Seq != 1 {
			t.Fatalf("new head %+v %v", h, err)
		}
		if err := h.Verify(k); err != nil {
			t.Fatal(err)
		}
		if err := store.Migrate(db); err != nil {
			t.Fatalf("migrate again: %v", err)
		}
		exec(t, s, "UPDATE audits SET actor = ? WHERE chain = 0 AND seq = 4", "operator:mallory")
		wantBroken(t, s, nil, 0, 4)
	})
}

// oneChainFixture is a fresh copy of the database the one-chain build made
// (testdata/audit-one-chain.*: six requests filed, three decided, a token
// created), its URL.
func oneChainFixture(t *testing.T, dialect string) string {
	t.Helper()
	if dialect == "sqlite" {
		b, err := os.ReadFile(filepath.Join("testdata", "audit-one-chain.sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "gatehouse.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return "sqlite:" + p
	}
	url := storetest.URL(t, dialect)
	dump, err := os.ReadFile(filepath.Join("testdata", "audit-one-chain.postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// pg_dump --inserts output; with no arguments pgx sends it as one simple
	// query, statements and all.
	if _, err := conn.Exec(cctx, string(dump)); err != nil {
		t.Fatalf("load the one-chain dump: %v", err)
	}
	return url
}

// On PostgreSQL a writer whose chain's head is held appends to the next free
// chain instead of waiting for the holder's commit.
func TestAuditChainsHeldHead(t *testing.T) {
	s, _ := storetest.Store(t, "postgres")
	p := models.Principal{ID: "tok_a", Role: models.RoleAgent, Name: "a"}
	hold := s.DB.Begin()
	defer hold.Rollback()
	if err := hold.Exec("SELECT id FROM audit_head WHERE id = 1 FOR UPDATE").Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var r *models.Request
	go func() {
		var err error
		r, _, err = s.CreateRequest(ctx, p, models.NewRequest{Kind: models.KindPermission, Title: "while chain 0 is held", Options: allowDeny()}, "")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the filing waited for chain 0's holder: appenders still queue on one head")
	}
	trail, err := s.AuditTrail(ctx, r.ID)
	if err != nil || len(trail) != 1 || trail[0].Chain != 1 || trail[0].Seq != 1 {
		t.Fatalf("trail %+v %v, want its entry as chain 1's first", trail, err)
	}
	if err := hold.Rollback().Error; err != nil {
		t.Fatal(err)
	}
	addEntries(t, s, 1) // chain 0 free again: the lowest free head
	if v, err := s.VerifyAudit(ctx, nil); err != nil || v.Chain(0).Seq != 1 || v.Chain(1).Seq != 1 {
		t.Fatalf("verify: %+v %v", v, err)
	}
}
