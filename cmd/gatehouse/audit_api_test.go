//go:build !agent

package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// `audit verify` over the API (--url/--token) and on the database catches
// what someone with the database's write access does to hide an action: an
// entry removed from the middle of chain 3, chain 5's newest entry removed
// with its head row moved back (caught by a saved head), an entry moved to
// another chain; and the signed head covers all eight chains, empty or not.
func TestAuditVerifyOverTheAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		url := storetest.URL(t, dialect)
		e := webtest.NewApp(t, app.Config{Database: url})
		st := e.Store
		op := e.Token(models.RoleOperator, "alice")
		var on5 []store.AuditEntry
		for range 3 {
			storetest.AppendOnChain(t, st, 3, "req_on3")
			on5 = append(on5, storetest.AppendOnChain(t, st, 5, "req_on5"))
		}
		headFile, head := savedHead(t, st)
		key, err := st.SigningKey(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		pub := base64.StdEncoding.EncodeToString(key.Public)
		api := []string{"audit", "verify", "--url", e.URL, "--token", op}
		db := []string{"audit", "verify", "--database", url}
		verify := func(args ...string) (int, string) {
			code, _, stderr := gatehouse(t, args...)
			return code, stderr
		}
		exec := func(q string, args ...any) {
			t.Helper()
			if err := st.DB.Exec(q, args...).Error; err != nil {
				t.Fatal(err)
			}
		}

		t.Run("the signed head covers all eight chains, the empty ones too", func(t *testing.T) {
			if len(head.Chains) != store.AuditChains || head.Chains[4].Seq != 0 || head.Chains[4].Hash != store.ZeroHash || head.Chains[3].Seq != 3 {
				t.Fatalf("head chains %+v", head.Chains)
			}
			for _, args := range [][]string{api, db, append(api, "--key", pub, "--head", headFile)} {
				if code, stderr := verify(args...); code != 0 {
					t.Fatalf("%v: %d %s", args, code, stderr)
				}
			}
		})
		t.Run("an entry moved from chain 5 to chain 4 is named", func(t *testing.T) {
			exec("UPDATE audits SET chain = 4, seq = 1 WHERE chain = 5 AND seq = 3")
			defer exec("UPDATE audits SET chain = 5, seq = 3 WHERE chain = 4 AND seq = 1")
			for _, args := range [][]string{api, db} {
				if code, stderr := verify(args...); code != 1 || !strings.Contains(stderr, "broken at chain 4 seq 1:") && !strings.Contains(stderr, "broken at chain 5 seq 3:") {
					t.Errorf("%v: %d %s", args, code, stderr)
				}
			}
		})
		t.Run("chain 5's newest entry cut off is caught by the saved head", func(t *testing.T) {
			exec("DELETE FROM audits WHERE chain = 5 AND seq = 3")
			exec("UPDATE audit_head SET seq = 2, hash = ?, at = ? WHERE id = 6", on5[1].Hash, on5[1].At)
			for _, args := range [][]string{api, db} {
				if code, stderr := verify(args...); code != 0 {
					t.Fatalf("without the saved head %v: %d %s, want the cut chain to look whole (the test shows the head does it)", args, code, stderr)
				}
				if code, stderr := verify(append(args, "--key", pub, "--head", headFile)...); code != 1 || !strings.Contains(stderr, "broken at chain 5 seq 3:") {
					t.Errorf("%v with the head: %d %s", args, code, stderr)
				}
			}
		})
		t.Run("an entry removed from the middle of chain 3 is named", func(t *testing.T) {
			exec("DELETE FROM audits WHERE chain = 3 AND seq = 2")
			for _, args := range [][]string{api, db} {
				if code, stderr := verify(args...); code != 1 || !strings.Contains(stderr, "broken at chain 3 seq 2:") {
					t.Errorf("%v: %d %s", args, code, stderr)
				}
			}
		})
	})
}
