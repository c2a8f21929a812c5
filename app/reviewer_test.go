package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/review"
)

// TestServeWithReviewer: a server configured with a reviewer reviews a
// filing on its own (woken by the filing), the API shows the review on the
// record at version 1, still open, and the reviewer stops with the server.
func TestServeWithReviewer(t *testing.T) {
	var rec struct {
		Body json.RawMessage `json:"body"`
	}
	b, err := os.ReadFile("../review/testdata/anthropic/success.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(rec.Body)
	}))
	defer model.Close()
	stored := make(chan *models.Request, 1)
	a, err := app.New(app.Config{Database: storetest.URL(t, "sqlite"), Addr: "127.0.0.1:0",
		Reviewer:     review.Config{Spec: "anthropic:test-model", BaseURL: model.URL + "/", APIKey: "k", Timeout: 10 * time.Second},
		ReviewStored: func(r *models.Request) { stored <- r }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	_, agent, err := a.Store.CreateToken(ctx, models.RoleAgent, "builder")
	if err != nil {
		t.Fatal(err)
	}
	_, op, err := a.Store.CreateToken(ctx, models.RoleOperator, "ann")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, token string, body any, out any) int {
		var buf bytes.Buffer
		if body != nil {
			json.NewEncoder(&buf).Encode(body)
		}
		req, _ := http.NewRequest(method, a.URL()+path, &buf)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	var filed api.Request
	if code := call("POST", "/v1/requests", agent, map[string]any{"kind": "permission", "title": "Bash", "tool": "Bash", "command": "git push --force origin main",
		"options": []map[string]string{{"id": "once", "label": "Allow once", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}}}, &filed); code != 201 {
		t.Fatalf("filing: %d", code)
	}
	select {
	case <-stored:
	case <-time.After(15 * time.Second):
		t.Fatal("no review within 15s")
	}
	var got api.Request
	call("GET", "/v1/requests/"+filed.ID, op, nil, &got)
	if got.Review == nil || got.Review.Status != "done" || got.Review.Risk != "high" || got.Review.Digest != got.ActionDigest || got.Status != "open" || got.Version != 1 {
		t.Fatalf("record %+v review %+v", got, got.Review)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
}
