package store_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func TestSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		clock := time.Now().UTC().Truncate(time.Second)
		s.Now = func() time.Time { return clock }
		_, op, err := s.CreateToken(ctx, models.RoleOperator, "op")
		if err != nil {
			t.Fatal(err)
		}
		login := func(t *testing.T) (*models.Session, string) {
			t.Helper()
			sess, cookie, err := s.LoginWithToken(ctx, op)
			if err != nil {
				t.Fatal(err)
			}
			return sess, cookie
		}

		t.Run("listed by id with its browser, never its secret", func(t *testing.T) {
			sess, cookie := login(t)
			if err := s.DescribeSession(ctx, sess.ID, "Firefox\u202e/1"); err != nil {
				t.Fatal(err)
			}
			ss, err := s.ListSessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got *models.Session
			for i := range ss {
				if ss[i].ID == sess.ID {
					got = &ss[i]
				}
			}
			if got == nil || got.UserAgent != "Firefox/1" || got.Name != "op" || got.ID == cookie || got.ID == got.Hash {
				t.Fatalf("listed %+v", got)
			}
		})

		t.Run("ended by id: refused at once, then unknown", func(t *testing.T) {
			sess, cookie := login(t)
			if _, err := s.SessionFor(ctx, cookie); err != nil { // cached now
				t.Fatal(err)
			}
			if err := s.EndSessionID(ctx, sess.ID, "operator:op", models.ViaAPI); err != nil {
				t.Fatal(err)
			}
			_, err := s.SessionFor(ctx, cookie)
			refused(t, err, "ended session")
			if err := s.EndSessionID(ctx, sess.ID, "operator:op", models.ViaAPI); models.ErrorCode(err) != models.ECodeNotFound {
				t.Fatalf("second end: %v", err)
			}
		})

		t.Run("ended by id: audited with who ended it, once", func(t *testing.T) {
			sess, cookie := login(t)
			if err := s.EndSessionID(ctx, sess.ID, "operator:root", store.ViaCLI); err != nil {
				t.Fatal(err)
			}
			_ = s.EndSessionID(ctx, sess.ID, "operator:root", store.ViaCLI) // unknown now: no entry
			var got []store.Audit
			for _, a := range allEntries(t, s) {
				if a.Action == store.ActionSessionRevoke && strings.Contains(a.Detail, sess.ID) {
					got = append(got, a)
				}
			}
			if len(got) != 1 || got[0].Actor != "operator:root" || got[0].Via != store.ViaCLI || got[0].RequestID != "" {
				t.Fatalf("entries %+v", got)
			}
			var d map[string]any
			if err := json.Unmarshal([]byte(got[0].Detail), &d); err != nil || d["session_id"] != sess.ID || d["operator"] != "op" || d["token_id"] != sess.TokenID {
				t.Fatalf("detail %s", got[0].Detail)
			}
			for _, secret := range []string{cookie, sess.Hash, sess.CSRF} {
				if strings.Contains(got[0].Detail, secret) {
					t.Fatalf("the entry carries a secret: %s", got[0].Detail)
				}
			}
		})

		t.Run("a login and a logout are audited, by the session, never a secret", func(t *testing.T) {
			sess, cookie := login(t)
			if err := s.EndSession(ctx, cookie); err != nil {
				t.Fatal(err)
			}
			if err := s.EndSession(ctx, cookie); err != nil { // gone already: no second entry
				t.Fatal(err)
			}
			byAction := map[string][]store.Audit{}
			for _, a := range allEntries(t, s) {
				if strings.Contains(a.Detail, sess.ID) {
					byAction[a.Action] = append(byAction[a.Action], a)
				}
			}
			for _, action := range []string{store.ActionSessionOpen, store.ActionSessionEnd} {
				got := byAction[action]
				if len(got) != 1 || got[0].Actor != "operator:op" || got[0].Via != models.ViaPage || got[0].RequestID != "" {
					t.Fatalf("%s entries %+v", action, got)
				}
				var d map[string]any
				if err := json.Unmarshal([]byte(got[0].Detail), &d); err != nil || d["session_id"] != sess.ID || d["token_id"] != sess.TokenID {
					t.Fatalf("%s detail %s", action, got[0].Detail)
				}
				for _, secret := range []string{cookie, sess.Hash, sess.CSRF, op} {
					if strings.Contains(got[0].Detail, secret) {
						t.Fatalf("the entry carries a secret: %s", got[0].Detail)
					}
				}
			}
			if len(byAction) != 2 {
				t.Fatalf("entries naming the session: %v", byAction)
			}
		})

		t.Run("a token revoked during its login opens no session", func(t *testing.T) {
			_, doomed, err := s.CreateToken(ctx, models.RoleOperator, "doomed")
			if err != nil {
				t.Fatal(err)
			}
			store.OnLoginRead(s, func() {
				if _, err := s.RevokeToken(ctx, "doomed"); err != nil {
					t.Error(err)
				}
			})
			_, _, err = s.LoginWithToken(ctx, doomed)
			store.OnLoginRead(s, nil)
			refused(t, err, "login with a token revoked after its check")
			ss, err := s.ListSessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, sess := range ss {
				if sess.Name == "doomed" {
					t.Fatalf("a session of the revoked token lives: %+v", sess)
				}
			}
		})

		t.Run("idle 7 days ends it; use within pushes it on", func(t *testing.T) {
			start := clock
			_, busy := login(t)
			_, idle := login(t)
			clock = start.Add(6 * 24 * time.Hour)
			if _, err := s.SessionFor(ctx, busy); err != nil {
				t.Fatal(err)
			}
			clock = start.Add(7*24*time.Hour + time.Second)
			_, err := s.SessionFor(ctx, idle)
			refused(t, err, "idle session")
			if _, err := s.SessionFor(ctx, busy); err != nil {
				t.Fatalf("busy session: %v", err)
			}
			clock = start
		})

		t.Run("30 days after opening it ends however busy", func(t *testing.T) {
			start := clock
			_, cookie := login(t)
			for d := 5; d < 30; d += 5 {
				clock = start.Add(time.Duration(d) * 24 * time.Hour)
				if _, err := s.SessionFor(ctx, cookie); err != nil {
					t.Fatalf("day %d: %v", d, err)
				}
			}
			clock = start.Add(30*24*time.Hour + time.Second)
			_, err := s.SessionFor(ctx, cookie)
			refused(t, err, "30-day-old session")
			clock = start
		})

		t.Run("last use is written at most once a minute", func(t *testing.T) {
			start := clock
			sess, cookie := login(t)
			clock = start.Add(30 * time.Second)
			got, err := s.SessionFor(ctx, cookie)
			if err != nil || !got.LastSeenAt.Equal(sess.LastSeenAt) {
				t.Fatalf("after 30 s: %v %v", got, err)
			}
			clock = start.Add(61 * time.Second)
			got, err = s.SessionFor(ctx, cookie)
			if err != nil || !got.LastSeenAt.Equal(clock) {
				t.Fatalf("after 61 s: %+v %v", got, err)
			}
			clock = start
		})

		t.Run("a session from before ids gets one at migration", func(t *testing.T) {
			sess, cookie := login(t)
			if err := s.DB.Exec("UPDATE sessions SET id = '', last_seen_at = NULL WHERE id = ?", sess.ID).Error; err != nil {
				t.Fatal(err)
			}
			if err := store.Migrate(s.DB); err != nil {
				t.Fatal(err)
			}
			var got models.Session
			if err := s.DB.Where("hash = ?", models.HashSecret(cookie)).Take(&got).Error; err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got.ID, "ses_") || got.LastSeenAt.IsZero() {
				t.Fatalf("migrated %+v", got)
			}
			if err := s.EndSessionID(ctx, got.ID, "operator:op", models.ViaAPI); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("the expiry sweeper purges expired ones", func(t *testing.T) {
			start := clock
			_, cookie := login(t)
			clock = start.Add(31 * 24 * time.Hour)
			defer func() { clock = start }()
			settled, end := runSweeper(t, s, changes)
			defer end() // before the clock is put back: the sweeper reads it
			testkit.Recv(t, settled, "the first sweep")
			var left int64
			if err := s.DB.Model(&models.Session{}).Where("hash = ?", models.HashSecret(cookie)).Count(&left).Error; err != nil || left != 0 {
				t.Fatalf("left %d %v", left, err)
			}
		})

		t.Run("expired ones are purged", func(t *testing.T) {
			start := clock
			_, cookie := login(t)
			clock = start.Add(31 * 24 * time.Hour)
			n, err := s.PurgeSessions(ctx)
			if err != nil || n == 0 {
				t.Fatalf("purged %d %v", n, err)
			}
			var left int64
			if err := s.DB.Model(&models.Session{}).Where("hash = ?", models.HashSecret(cookie)).Count(&left).Error; err != nil || left != 0 {
				t.Fatalf("left %d %v", left, err)
			}
			ss, _ := s.ListSessions(ctx)
			if len(ss) != 0 {
				t.Fatalf("listed %d expired", len(ss))
			}
			clock = start
		})
	})
}

// allEntries is every entry of every chain of the audit trail.
func allEntries(t *testing.T, s *store.Store) []store.Audit {
	t.Helper()
	n, err := s.AuditChainCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Audit
	for c := range n {
		es, err := s.AuditEntries(ctx, uint32(c), 0, 100000)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, es...)
	}
	return out
}
