package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestPageCards checks, through the server, what a card says: who asks and
// where, what an option saves, and risk only when the filer gave one.
func TestPageCards(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		e := startPage(t, dialect) // webtest wires runtimes
		b := e.browser()
		e.login(b)
		_, secret, err := e.store.CreateToken(ctx, models.RoleRuntime, "claude-host")
		if err != nil {
			t.Fatal(err)
		}
		rt := client.New(e.url, secret)
		reg, err := rt.RegisterRuntime(ctx, api.RuntimeRegistration{Name: "claude-host", Machine: "dev-laptop.local"})
		if err != nil {
			t.Fatal(err)
		}
		saves := "Bash(git push *) to project settings (.claude/settings.local.json)"
		n := hookRequest("git push origin main", "cabcfecf-230c-4cc4-9bfb-dc5c563ea4e3", "/home/dev/project")
		n.RuntimeID = &reg.ID
		r, err := rt.File(ctx, n, "")
		if err != nil {
			t.Fatal(err)
		}

		t.Run("the card names the runtime, its machine, the session and directory", func(t *testing.T) {
			c := e.get(b, "/", http.StatusOK).Find("#req-" + r.ID)
			for id, want := range map[string]string{
				"card-created-by": "runtime:claude-host", "card-runtime": "claude-host on dev-laptop.local",
				"card-session": "cabcfecf", "card-cwd": "/home/dev/project",
			} {
				if got := strings.Join(strings.Fields(c.Find(`[data-testid="`+id+`"]`).Text()), " "); got != want {
					t.Errorf("%s = %q, want %q", id, got, want)
				}
			}
			if got := c.Find(`button[data-option="project"] [data-testid="option-saves"]`).Text(); got != saves {
				t.Errorf("saves = %q", got)
			}
			if c.Find(`[data-testid="card-risk"]`).Length() != 0 {
				t.Error("a risk badge on a request filed without risk")
			}
		})

		t.Run("the record carries saves and a null risk", func(t *testing.T) {
			var raw map[string]any
			if err := e.operator.Do(ctx, http.MethodGet, "/v1/requests/"+r.ID, nil, nil, &raw); err != nil {
				t.Fatal(err)
			}
			if v, ok := raw["risk"]; !ok || v != nil {
				t.Errorf("risk = %v (present %v), want null", v, ok)
			}
			opts, _ := json.Marshal(raw["options"])
			if !strings.Contains(string(opts), `"saves":"Bash(git push *) to project settings`) {
				t.Errorf("options = %s", opts)
			}
		})

		t.Run("an agent cannot pass off an oversized saves text, and nothing is filed", func(t *testing.T) {
			before := len(e.listOpen())
			bad := hookRequest("git push origin main", "s-2", "/x")
			bad.Options[1].Saves = strings.Repeat("x", models.MaxSaves+1)
			_, err := e.agent.File(ctx, bad, "")
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest || ce.Code != models.ECodeInvalid {
				t.Fatalf("file = %v, want 400 invalid_input", err)
			}
			if after := len(e.listOpen()); after != before {
				t.Fatalf("open requests %d → %d", before, after)
			}
		})

		t.Run("the agent cannot approve its own request from the page's routes", func(t *testing.T) {
			_, err := e.agent.Decide(ctx, r.ID, r.Version, "project", "")
			var ce *client.Error
			if !errors.As(err, &ce) || (ce.Status != http.StatusForbidden && ce.Status != http.StatusNotFound) {
				t.Fatalf("agent decide = %v, want 403 or 404", err)
			}
			if got, _ := e.operator.Get(ctx, r.ID); got.Status != "open" {
				t.Fatalf("status = %s", got.Status)
			}
		})
	})
}
