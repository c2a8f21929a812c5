package openapi

import (
	"encoding/json"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// Examples of the main routes, built from the wire types so that they carry
// exactly the fields a real answer does (the linters check each against its
// schema).

var exampleAt = time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC)

func exampleOptions() []api.Option {
	return []api.Option{{ID: "allow", Label: "Allow", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
}

func exampleFiling() any {
	expires := int64(900)
	return wire(api.NewRequest{Kind: "approval", Title: "Run git push origin main", Summary: "Push the release branch.",
		Risk: "medium", Tool: "Bash", Command: "git push origin main", Options: exampleOptions(), DefaultOption: "deny",
		SourceRef: map[string]string{"session": "s-42", "cwd": "/home/dev/app"}, ExpiresIn: &expires})
}

func exampleRecord() api.Request {
	risk, def := "medium", "deny"
	return api.Request{ID: "req_01jh8k2v3m", Kind: "approval", Status: "open", Version: 1, Title: "Run git push origin main",
		Summary: "Push the release branch.", Risk: &risk, Tool: "Bash", Command: "git push origin main", Options: exampleOptions(),
		DefaultOption: &def, Source: "session", SourceRef: map[string]string{"session": "s-42", "cwd": "/home/dev/app"},
		CreatedBy: "agent:ci-bot", CreatedAt: exampleAt, UpdatedAt: exampleAt, ExpiresAt: exampleAt.Add(15 * time.Minute),
		Actuation: api.Actuation{State: "none"}, Sealed: true,
		ActionDigest: "9f2c4e1a7b3d5f6081a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708"}
}

func exampleRequest() any { return wire(exampleRecord()) }

func exampleDecide() any {
	version, decision, note := 1, "allow", "Go ahead; tag the release after."
	return wire(api.Decide{Version: &version, Decision: &decision, Note: &note})
}

func exampleDecided() any {
	r := exampleRecord()
	decision, note, by, via := "allow", "Go ahead; tag the release after.", "operator:alice", "api"
	at := exampleAt.Add(2 * time.Minute)
	r.Status, r.Version, r.Decision, r.Note, r.DecidedBy, r.DecidedVia = "resolved", 2, &decision, &note, &by, &via
	r.ResolvedAt, r.UpdatedAt, r.DecidedDigest = &at, at, &r.ActionDigest
	return wire(api.Decided{Request: r})
}

// wire is v as its JSON says it.
func wire(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic("openapi: example: " + err.Error()) // plain structs always marshal
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic("openapi: example: " + err.Error())
	}
	return out
}
