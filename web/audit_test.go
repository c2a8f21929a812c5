package web_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

type auditPage struct {
	Entries []store.AuditEntry `json:"entries"`
	Next    uint64             `json:"next"`
}

func getAudit(t *testing.T, e *webtest.Env, path, token string) auditPage {
	t.Helper()
	status, body := e.Do("GET", path, token, nil)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	var p auditPage
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return p
}

// serverKey reads the public key /v1/keys serves for the store under e.
func serverKey(t *testing.T, e *webtest.Env) ed25519.PublicKey {
	t.Helper()
	srv, err := web.New(web.Config{BaseURL: "http://127.0.0.1"}, web.Deps{Store: e.Store, Watcher: e.Changes, Runtimes: e.Store, Changes: e.Changes})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	resp, err := hs.Client().Get(hs.URL + "/v1/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var keys struct {
		Keys []struct {
			PublicKey string `json:"public_key"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&keys); err != nil || len(keys.Keys) != 1 {
		t.Fatalf("/v1/keys: %+v %v", keys, err)
	}
	pub, err := base64.StdEncoding.DecodeString(keys.Keys[0].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func TestAuditRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		op := e.Token(models.RoleOperator, "op")
		ag := e.Token(models.RoleAgent, "agent")
		rt := e.Token(models.RoleRuntime, "rt")
		var ids []string
		for i := 0; i < 3; i++ {
			ids = append(ids, e.File(ag, map[string]any{"kind": "permission", "title": fmt.Sprintf("step %d", i)})["id"].(string))
		}
		if status, body := e.Do("POST", "/v1/requests/"+ids[1]+"/decide", op, map[string]any{"version": 1, "decision": "deny"}); status != 200 {
			t.Fatalf("decide: %d %s", status, body)
		}

		t.Run("the agent cannot read the trail or the head", func(t *testing.T) {
			for _, path := range []string{"/v1/audit", "/v1/audit/head", "/v1/audit?after=0&limit=10", "/v1/requests/" + ids[0] + "/audit"} {
				for _, tok := range []string{ag, rt} {
					status, body := e.Do("GET", path, tok, nil)
					if status != 403 || webtest.JSON(t, body)["error"] != "forbidden" {
						t.Fatalf("GET %s as a filer: %d %s, want 403 forbidden", path, status, body)
					}
				}
				if status, _ := e.Do("GET", path, "", nil); status != 401 {
					t.Fatalf("GET %s without a token: %d, want 401", path, status)
				}
			}
		})

		t.Run("the operator pages through one chain", func(t *testing.T) {
			all := getAudit(t, e, "/v1/audit", op)
			if len(all.Entries) != 4 || all.Next != 4 {
				t.Fatalf("whole chain: %d entries, next %d; want 4, 4", len(all.Entries), all.Next)
			}
			v := store.NewChainVerifier()
			var got []store.AuditEntry
			for after := uint64(0); ; {
				p := getAudit(t, e, fmt.Sprintf("/v1/audit?after=%d&limit=3", after), op)
				if len(p.Entries) == 0 {
					if p.Next != after {
						t.Fatalf("empty page: next %d, want %d", p.Next, after)
					}
					break
				}
				got = append(got, p.Entries...)
				after = p.Next
			}
			for _, en := range got {
				if err := v.Next(en); err != nil {
					t.Fatalf("the API's entries do not verify: %v", err)
				}
			}
			if v.N != 4 || got[3].Action != "decide" || got[3].RequestID != ids[1] {
				t.Fatalf("paged chain: %+v", got)
			}
		})

		t.Run("one request's entries in the same shape", func(t *testing.T) {
			p := getAudit(t, e, "/v1/requests/"+ids[1]+"/audit", op)
			if len(p.Entries) != 2 || p.Entries[0].Seq != 2 || p.Entries[1].Seq != 4 || p.Next != 4 {
				t.Fatalf("request trail: %+v", p)
			}
			var d map[string]any
			if err := json.Unmarshal(p.Entries[1].Detail, &d); err != nil || d["decision"] != "deny" {
				t.Fatalf("decide detail %s", p.Entries[1].Detail)
			}
		})

		t.Run("each chain pages on its own and the head signs them all", func(t *testing.T) {
			// Two entries on chain 1, as a second replica's batch appends them
			// while this one holds chain 0's head.
			var on1 []store.AuditEntry
			for range 2 {
				on1 = append(on1, storetest.AppendOnChain(t, e.Store, 1, ids[2]))
			}
			p := getAudit(t, e, "/v1/audit?chain=1", op)
			if len(p.Entries) != 2 || p.Next != 2 || p.Entries[0].Chain != 1 || p.Entries[1].Hash != on1[1].Hash {
				t.Fatalf("chain 1: %+v", p)
			}
			v := store.NewChainVerifier()
			for _, ch := range []string{"0", "1", "2"} {
				for _, en := range getAudit(t, e, "/v1/audit?chain="+ch, op).Entries {
					if err := v.Next(en); err != nil {
						t.Fatalf("chain %s: %v", ch, err)
					}
				}
			}
			if v.N != 6 {
				t.Fatalf("%d entries over the chains, want 6", v.N)
			}
			if p := getAudit(t, e, "/v1/audit?chain=0&after=4", op); len(p.Entries) != 0 {
				t.Fatalf("chain 0 after its last entry: %+v", p)
			}
			status, body := e.Do("GET", "/v1/audit/head", op, nil)
			var h store.SignedHead
			if status != 200 || json.Unmarshal(body, &h) != nil {
				t.Fatalf("head: %d %s", status, body)
			}
			if h.Chains[0].Seq != 4 || h.Chains[1].Seq != 2 || h.Chains[1].Hash != on1[1].Hash || h.Chains[1].At != on1[1].At {
				t.Fatalf("head %+v", h.Chains)
			}
			if err := h.Verify(serverKey(t, e)); err != nil {
				t.Fatal(err)
			}
			h.Chains[1].Seq = 1 // chain 1 cut back by one, the others as signed
			if err := h.Verify(serverKey(t, e)); !errors.Is(err, store.ErrHeadSignature) {
				t.Fatalf("a head with chain 1 moved back: %v, want it refused", err)
			}
			trail := getAudit(t, e, "/v1/requests/"+ids[2]+"/audit", op)
			if len(trail.Entries) != 3 || trail.Entries[0].Chain != 0 || trail.Entries[2].Chain != 1 {
				t.Fatalf("a request's trail across chains: %+v", trail.Entries)
			}
		})

		t.Run("bad after or limit is 400 invalid_input", func(t *testing.T) {
			for _, q := range []string{"after=-1", "after=abc", "after=1.5", "limit=0", "limit=1001", "limit=x", "after=99999999999999999999", "chain=-1", "chain=x", "chain=4294967296"} {
				status, body := e.Do("GET", "/v1/audit?"+q, op, nil)
				if status != 400 || webtest.JSON(t, body)["error"] != "invalid_input" {
					t.Fatalf("?%s: %d %s, want 400 invalid_input", q, status, body)
				}
			}
		})

		t.Run("the head is signed with the key /v1/keys serves", func(t *testing.T) {
			status, body := e.Do("GET", "/v1/audit/head", op, nil)
			var h store.SignedHead
			if status != 200 || json.Unmarshal(body, &h) != nil {
				t.Fatalf("head: %d %s", status, body)
			}
			all := getAudit(t, e, "/v1/audit", op)
			last := all.Entries[len(all.Entries)-1]
			if len(h.Chains) != store.AuditChains || h.Chains[0].Seq != last.Seq || h.Chains[0].Hash != last.Hash || h.Chains[0].At != last.At || h.KeyID == "" {
				t.Fatalf("head %+v, last entry %+v", h, last)
			}
			if err := h.Verify(serverKey(t, e)); err != nil {
				t.Fatalf("with the key of /v1/keys: %v", err)
			}
			other, _, _ := ed25519.GenerateKey(rand.Reader)
			if err := h.Verify(other); !errors.Is(err, store.ErrHeadSignature) {
				t.Fatalf("with another key: %v, want it refused", err)
			}
		})
	})
}
