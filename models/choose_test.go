package models_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
)

// TestSelectOption runs the corpus of what operators do to choose an option
// (testdata/option_choice.json): a typed word selects by effect or position,
// never by a filer's id; a button by its id; ambiguity is refused with a hint.
func TestSelectOption(t *testing.T) {
	var corpus struct {
		Sets  map[string][]models.Option `json:"option_sets"`
		Cases []struct {
			Name, Options, Typed, Button, Want, Error string
			Position                                  int
		}
	}
	readJSON(t, "testdata/option_choice.json", &corpus)
	for _, c := range corpus.Cases {
		t.Run(c.Name, func(t *testing.T) {
			opts, ok := corpus.Sets[c.Options]
			if !ok {
				t.Fatalf("no option set %q", c.Options)
			}
			o, err := models.SelectOption(opts, models.Choice{Button: c.Button, Position: c.Position, Typed: c.Typed})
			if c.Error != "" {
				if models.ErrorCode(err) != c.Error {
					t.Fatalf("got %q (%v), want the refusal %s", o.ID, err, c.Error)
				}
				detail := models.ErrorDetail(err)
				_, hint, _ := strings.Cut(detail, "; ") // before it, what was typed is echoed
				if c.Typed != "" && c.Error != models.ECodeInvalid && !strings.Contains(hint, "1 = ") {
					t.Errorf("the refusal %q gives no hint by number", detail)
				}
				for _, opt := range opts {
					if c.Typed != "" && strings.Contains(hint, `"`+opt.ID+`"`) && opt.ID != strings.ToLower(opt.Label) {
						t.Errorf("the hint %q shows the id %q", hint, opt.ID)
					}
				}
				return
			}
			if err != nil || o.ID != c.Want {
				t.Fatalf("got %q (%v), want %q", o.ID, err, c.Want)
			}
		})
	}
}

// TestCheckMisleading runs the corpus of filed options
// (testdata/misleading_options.json): an id or a label that reads as the
// opposite of the effect is refused, naming the option; the options
// Gatehouse's own filers build from the recorded clients pass.
func TestCheckMisleading(t *testing.T) {
	var corpus struct {
		Cases []struct {
			Name       string
			Option     models.Option
			Misleading bool
		}
	}
	readJSON(t, "testdata/misleading_options.json", &corpus)
	for _, c := range corpus.Cases {
		t.Run(c.Name, func(t *testing.T) {
			opts := []models.Option{{ID: "first", Label: "Fine", Effect: models.EffectDeny}, c.Option}
			err := models.CheckMisleading(opts)
			if !c.Misleading {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if models.ErrorCode(err) != models.ECodeMisleading || !strings.Contains(models.ErrorDetail(err), "options[1]") {
				t.Fatalf("got %v, want misleading_option naming options[1]", err)
			}
			n := models.NewRequest{Title: "t", Options: opts}
			if err := n.Normalize(); models.ErrorCode(err) != models.ECodeMisleading {
				t.Fatalf("a filing with it: %v, want misleading_option", err)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
