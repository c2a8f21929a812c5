package store

import (
	"bytes"
	"encoding/json"

	"github.com/gatehousehq/gatehouse/models"
)

// editDetail is an edit's audit detail: each field that changed, before and
// after, so the trail shows what the operator was shown before the edit.
func editDetail(was, now *models.Request) map[string]any {
	d := map[string]any{}
	add := func(name string, before, after any) {
		// Compared as JSON, the form the entry keeps (no options and [] are alike).
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		if !bytes.Equal(b, a) && !(string(b) == "null" && string(a) == "[]") && !(string(b) == "[]" && string(a) == "null") {
			d[name] = map[string]any{"before": before, "after": after}
		}
	}
	add("title", was.Title, now.Title)
	add("summary", was.Summary, now.Summary)
	add("detail", was.Detail, now.Detail)
	add("options", was.Options, now.Options)
	add("default_option", was.DefaultOption, now.DefaultOption)
	return d
}
