package api_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

// worked is a Claude Code Bash permission as the hook files it.
var worked = api.NewRequest{
	Kind: "permission", Title: "Run: git push origin main", Tool: "Bash", Command: "git push origin main",
	Options:       []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
	DefaultOption: "deny", SourceRef: map[string]string{"session": "s1", "cwd": "/srv/app"},
}

func TestActionDigest(t *testing.T) {
	base := worked.AsFiled(nil)
	// The digest is defined by exclusion: every member of the record moves
	// it except those the server assigns. A member added to Request later
	// fails here until it is covered or listed as server-assigned.
	t.Run("every member but the server-assigned ones moves it", func(t *testing.T) {
		excluded := map[string]bool{}
		for _, k := range api.ServerAssigned() {
			excluded[k] = true
		}
		seen := map[string]string{api.ActionDigest(base): "the example"}
		rt := reflect.TypeOf(api.Request{})
		for i := range rt.NumField() {
			f := rt.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			r := *base
			setDifferent(t, reflect.ValueOf(&r).Elem().Field(i), name)
			d := api.ActionDigest(&r)
			_, moved := seen[d]
			moved = !moved
			if excluded[name] {
				if d != api.ActionDigest(base) {
					t.Errorf("%s is server-assigned but moves the digest", name)
				}
				continue
			}
			if !moved {
				t.Errorf("changing %s does not move the digest: it is not covered", name)
			}
			seen[d] = name
		}
	})
	t.Run("what rules, policies and clients act on is never server-assigned", func(t *testing.T) {
		for _, k := range api.ServerAssigned() {
			switch k {
			case "kind", "title", "summary", "detail", "risk", "tool", "command", "options", "default_option",
				"allow_answer", "source", "source_ref", "runtime_id", "pending_id", "sealed", "approvals":
				t.Errorf("%s is excluded from the digest", k)
			}
		}
	})
	t.Run("the votes do not move it; the policy does", func(t *testing.T) {
		r := *base
		r.Approvals = &api.Approvals{Groups: []string{"release"}, Required: 2, Votes: []api.Vote{}}
		with := api.ActionDigest(&r)
		r.Approvals = &api.Approvals{Groups: []string{"release"}, Required: 2, Votes: []api.Vote{{By: "operator:bob", Decision: "once"}}}
		if api.ActionDigest(&r) != with {
			t.Fatal("a vote moved the digest")
		}
		r.Approvals = &api.Approvals{Groups: []string{"release"}, Required: 1, Votes: []api.Vote{}}
		if api.ActionDigest(&r) == with {
			t.Fatal("the number of votes required does not move the digest")
		}
	})
	t.Run("the escalation steps move it; their firing does not", func(t *testing.T) {
		r := *base
		steps := []api.EscalationStep{{After: "10m", To: &api.EscalationTo{Groups: []string{"oncall"}}}, {After: "30m", Then: "halt"}}
		r.Approvals = &api.Approvals{Groups: []string{"release"}, Required: 1, Votes: []api.Vote{}}
		without := api.ActionDigest(&r)
		r.Approvals = &api.Approvals{Groups: []string{"release"}, Required: 1, Escalate: steps, Votes: []api.Vote{}}
		with := api.ActionDigest(&r)
		if with == without {
			t.Fatal("adding escalation steps does not move the digest")
		}
		r.Approvals = &api.Approvals{Groups: []string{"release"}, Required: 1, Escalate: steps[:1], Votes: []api.Vote{}}
		if api.ActionDigest(&r) == with {
			t.Fatal("dropping the halt step does not move the digest")
		}
		r.Approvals = &api.Approvals{Groups: []string{"release"}, Required: 1, Escalate: steps, Votes: []api.Vote{}}
		r.Escalation = &api.Escalation{Step: 1, Fired: []api.Escalated{{Step: 1, Groups: []string{"oncall"}, Why: "due"}}}
		if api.ActionDigest(&r) != with {
			t.Fatal("a fired step moved the digest")
		}
	})
	t.Run("a filing's digest is its record's", func(t *testing.T) {
		answered := *base
		answered.ID, answered.Status, answered.Version, answered.CreatedBy = "req_1", "open", 1, "agent:a"
		answered.ActionDigest = api.ActionDigest(&answered)
		if !worked.FiledAs(&answered) {
			t.Fatal("FiledAs refuses the record the filing makes")
		}
		risky := answered
		risk := "low"
		risky.Risk = &risk
		risky.ActionDigest = api.ActionDigest(&risky)
		if worked.FiledAs(&risky) {
			t.Fatal("FiledAs accepts a record with a risk the filing did not set (a pre-claimed key)")
		}
	})
}

// setDifferent sets v to a value other than its current one.
func setDifferent(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int:
		v.SetInt(v.Int() + 1)
	default:
		// Pointers, slices, maps and structs: a JSON value other than the current.
		b, _ := json.Marshal(v.Interface())
		alt := map[string]string{
			"risk": `"high"`, "default_option": `"once"`, "decision": `"once"`, "answer": `"a"`, "note": `"n"`,
			"options": `[{"id":"x","label":"X"}]`, "source_ref": `{"cwd":"/"}`, "runtime_id": `"rt_1"`, "pending_id": `"p1"`,
			"created_at": `"2001-01-01T00:00:00Z"`, "updated_at": `"2001-01-01T00:00:00Z"`, "expires_at": `"2001-01-01T00:00:00Z"`,
			"resolved_at": `"2001-01-01T00:00:00Z"`, "decided_by": `"x"`, "decided_via": `"x"`, "actuation": `{"state":"failed","attempts":3}`,
			"hold": `{"rule":"r","until":"2001-01-01T00:00:00Z","then":"once"}`, "edited_at": `"2001-01-01T00:00:00Z"`,
			"decided_digest": `"d"`, "approvals": `{"groups":["g"],"required":1,"note":null,"votes":[]}`,
			"escalation": `{"step":1,"next_at":null,"fired":[{"step":1,"at":"2001-01-01T00:00:00Z","groups":["oncall"],"why":"due"}]}`,
			"grant_id":   `"rem_1"`,
			"review":     `{"status":"done","risk":"critical","authorised":"low","rationale":"r","model":"m","digest":"d","tokens_in":1,"tokens_out":1,"at":"2001-01-01T00:00:00Z"}`,
		}[name]
		if alt == "" || alt == string(b) {
			t.Fatalf("the test has no other value for %s (%s): add one", name, v.Type())
		}
		p := reflect.New(v.Type())
		if err := json.Unmarshal([]byte(alt), p.Interface()); err != nil {
			t.Fatal(name, err)
		}
		v.Set(p.Elem())
	}
}
