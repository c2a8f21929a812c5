package models_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
)

// TestOnceOption: a batch allows only with the option that allows this one
// request once; with none it may only deny.
func TestOnceOption(t *testing.T) {
	allow := func(id, saves string) models.Option {
		return models.Option{ID: id, Label: id, Effect: models.EffectAllow, Saves: saves}
	}
	deny := models.Option{ID: "deny", Label: "Deny", Effect: models.EffectDeny}
	for _, c := range []struct {
		name string
		opts []models.Option
		want string // "" for none
	}{
		{"the default options", []models.Option{allow("once", ""), deny}, "once"},
		{"one allow of any name", []models.Option{allow("yes", ""), deny}, "yes"},
		{"the only allow saves", []models.Option{allow("project", "Bash(git push *)"), deny}, ""},
		{"Claude Code's three", []models.Option{allow("once", ""), allow("session", ""), allow("project", "Bash(x *)"), deny}, "once"},
		{"Codex's", []models.Option{allow("accept", ""), allow("accept_for_session", ""), allow("always", ""), {ID: "decline", Effect: models.EffectDeny}}, "accept"},
		{"two allows, neither named once", []models.Option{allow("session", ""), allow("always", ""), deny}, ""},
		{"a once that says it saves", []models.Option{allow("once", "a rule"), allow("project", "b"), deny}, ""},
		{"no allow", []models.Option{deny}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, ok := models.OnceOption(c.opts)
			if ok != (c.want != "") || o.ID != c.want {
				t.Fatalf("got %q %v, want %q", o.ID, ok, c.want)
			}
			r := &models.Request{Options: c.opts}
			for _, opt := range c.opts {
				err := models.Decision{Option: opt.ID, Batch: "bat_1"}.CheckBatch(r)
				mayBatch := opt.Effect == models.EffectDeny || opt.ID == c.want
				if (err == nil) != mayBatch {
					t.Errorf("%s in a batch: %v", opt.ID, err)
				}
				if err := (models.Decision{Option: opt.ID}).CheckBatch(r); err != nil {
					t.Errorf("%s alone: %v", opt.ID, err)
				}
			}
		})
	}
}
