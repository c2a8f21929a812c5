package store_test

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func refused(t *testing.T, err error, what string) {
	t.Helper()
	if models.ErrorCode(err) != models.ECodeUnauthenticated {
		t.Fatalf("%s: got %v, want unauthenticated", what, err)
	}
}

// openFileStore opens the SQLite file url names as a process of its own
// would (the server, or the token CLI beside it): its own writer and reader
// pool, migrated.
func openFileStore(t *testing.T, url string) *store.Store {
	t.Helper()
	db := storetest.Migrated(t, url)
	read, err := store.OpenReadDB(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := read.DB(); err == nil {
			s.Close()
		}
	})
	s := store.NewStore(db, store.NewChanges())
	s.Read = read
	return s
}

// TestAuthCacheSQLite: a server's cached token or session is refused at once
// when another process (the token CLI: its own store, announcing nothing)
// revokes it in the same SQLite file.
func TestAuthCacheSQLite(t *testing.T) {
	url := storetest.URL(t, "sqlite")
	server, cli := openFileStore(t, url), openFileStore(t, url)

	t.Run("a token revoked by another process is refused at once", func(t *testing.T) {
		tok, secret, err := server.CreateToken(ctx, models.RoleAgent, "revoked-elsewhere")
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second is answered from the cache
			if got, err := server.Authenticate(ctx, secret); err != nil || got.ID != tok.ID {
				t.Fatalf("authenticate: %v %v", got, err)
			}
		}
		if _, err := cli.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		_, err = server.Authenticate(ctx, secret)
		refused(t, err, "revoked token")
	})

	t.Run("a session ended by another process is refused at once", func(t *testing.T) {
		_, opSecret, err := server.CreateToken(ctx, models.RoleOperator, "op")
		if err != nil {
			t.Fatal(err)
		}
		_, cookie, err := server.LoginWithToken(ctx, opSecret)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := server.SessionFor(ctx, cookie); err != nil {
				t.Fatal(err)
			}
		}
		if err := cli.EndSession(ctx, cookie); err != nil {
			t.Fatal(err)
		}
		_, err = server.SessionFor(ctx, cookie)
		refused(t, err, "ended session")
	})

	t.Run("a session ended by id by another process is refused at once", func(t *testing.T) {
		_, opSecret, err := server.CreateToken(ctx, models.RoleOperator, "op-by-id")
		if err != nil {
			t.Fatal(err)
		}
		sess, cookie, err := server.LoginWithToken(ctx, opSecret)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := server.SessionFor(ctx, cookie); err != nil {
				t.Fatal(err)
			}
		}
		if err := cli.EndSessionID(ctx, sess.ID, "operator:op", models.ViaAPI); err != nil {
			t.Fatal(err)
		}
		_, err = server.SessionFor(ctx, cookie)
		refused(t, err, "session ended by id")
	})

	t.Run("a revoked token's sessions are refused at once", func(t *testing.T) {
		tok, opSecret, err := server.CreateToken(ctx, models.RoleOperator, "op2")
		if err != nil {
			t.Fatal(err)
		}
		_, cookie, err := server.LoginWithToken(ctx, opSecret)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := server.SessionFor(ctx, cookie); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.RevokeToken(ctx, tok.Name); err != nil {
			t.Fatal(err)
		}
		_, err = server.SessionFor(ctx, cookie)
		refused(t, err, "session of a revoked token")
	})

	t.Run("the revocation counter lives beside the database, with its mode", func(t *testing.T) {
		path, _ := store.SQLitePath(url)
		db, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := os.Stat(path + "-revoked")
		if err != nil {
			t.Fatal(err)
		}
		if c.Size() != 8 || c.Mode() != db.Mode() {
			t.Fatalf("counter: %d bytes, mode %v; want 8 bytes, the database's %v", c.Size(), c.Mode(), db.Mode())
		}
		before, err := os.ReadFile(path + "-revoked")
		if err != nil {
			t.Fatal(err)
		}
		tok, _, err := server.CreateToken(ctx, models.RoleAgent, "counted")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		after, err := os.ReadFile(path + "-revoked")
		if err != nil {
			t.Fatal(err)
		}
		if binary.NativeEndian.Uint64(after) != binary.NativeEndian.Uint64(before)+1 {
			t.Fatalf("counter %x → %x: a revocation raises it by one", before, after)
		}
	})
}

// TestAuthCacheWithoutCounter: a store that cannot map the revocation counter
// reads the file's epoch at every call, and makes no revocation, which a
// server that maps the counter would not see.
func TestAuthCacheWithoutCounter(t *testing.T) {
	url := storetest.URL(t, "sqlite")
	path, _ := store.SQLitePath(url)
	if err := os.Mkdir(path+"-revoked", 0o700); err != nil { // not a file: it cannot be mapped
		t.Fatal(err)
	}
	s := openFileStore(t, url)
	tok, secret, err := s.CreateToken(ctx, models.RoleAgent, "no-counter")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("calls authenticate", func(t *testing.T) {
		for range 2 {
			if got, err := s.Authenticate(ctx, secret); err != nil || got.ID != tok.ID {
				t.Fatalf("authenticate: %v %v", got, err)
			}
		}
	})
	t.Run("a revocation is refused and changes nothing", func(t *testing.T) {
		if _, err := s.RevokeToken(ctx, tok.ID); err == nil || !strings.Contains(err.Error(), "cannot revoke") || !strings.Contains(err.Error(), path+"-revoked") {
			t.Fatalf("revoke without the counter: %v, want an error naming the counter file", err)
		}
		if got, err := s.Authenticate(ctx, secret); err != nil || got.ID != tok.ID {
			t.Fatalf("after the refused revocation: %v %v", got, err)
		}
	})
}

// TestAuthCacheReplicas: on PostgreSQL a token revoked anywhere (a replica, or
// the CLI's store that announces nothing) is refused by every other replica as
// soon as the revocation's notification reaches it, though that replica had it
// cached.
func TestAuthCacheReplicas(t *testing.T) {
	url := storetest.URL(t, "postgres")
	db := storetest.Migrated(t, url)
	a, b := startReplica(t, url, db, nil), startReplica(t, url, db, nil)
	for _, r := range []*replica{a, b} {
		r.store.CacheAuth(r.changes)
	}
	heard := make(chan struct{}, 8)
	b.changes.OnRevoke(func() { heard <- struct{}{} })
	cli := store.NewStore(db, nil)

	for _, by := range []struct {
		name  string
		store *store.Store
	}{{"another replica", a.store}, {"the CLI", cli}} {
		t.Run("a token revoked by "+by.name+" is refused by a replica that cached it", func(t *testing.T) {
			tok, secret, err := a.store.CreateToken(ctx, models.RoleAgent, "cached-"+by.name)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if got, err := b.store.Authenticate(ctx, secret); err != nil || got.ID != tok.ID {
					t.Fatalf("authenticate on b: %v %v", got, err)
				}
			}
			if _, err := by.store.RevokeToken(ctx, tok.ID); err != nil {
				t.Fatal(err)
			}
			within(t, heard, "the revocation reaching the other replica")
			_, err = b.store.Authenticate(ctx, secret)
			refused(t, err, "revoked token on the other replica")
		})

		t.Run("a session ended by id by "+by.name+" is refused by a replica that cached it", func(t *testing.T) {
			_, opSecret, err := a.store.CreateToken(ctx, models.RoleOperator, "op-"+by.name)
			if err != nil {
				t.Fatal(err)
			}
			sess, cookie, err := a.store.LoginWithToken(ctx, opSecret)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := b.store.SessionFor(ctx, cookie); err != nil {
					t.Fatalf("session on b: %v", err)
				}
			}
			if err := by.store.EndSessionID(ctx, sess.ID, "operator:op", models.ViaAPI); err != nil {
				t.Fatal(err)
			}
			within(t, heard, "the session's end reaching the other replica")
			_, err = b.store.SessionFor(ctx, cookie)
			refused(t, err, "ended session on the other replica")
		})
	}
}
