package api_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/gatehousehq/gatehouse/api"
)

// The action digest hashes what a direct writer makes of the record; its
// definition is the record marshalled less the server-assigned members and
// canonicalised (by exclusion). The two must be the same bytes for every
// record, or declined by the writer (the definition then runs).
func TestActionCanonicalDirect(t *testing.T) {
	same := func(t *testing.T, r *api.Request) {
		t.Helper()
		direct, ok, def := api.ActionCanonicalBoth(r)
		if ok && !bytes.Equal(direct, def) {
			t.Fatalf("the direct writer and the definition differ:\ndirect      %s\nby exclusion %s", direct, def)
		}
	}
	t.Run("the worked example, filed and decided", func(t *testing.T) {
		r := worked.AsFiled(nil)
		same(t, r)
		d := *r
		d.ID, d.Status, d.Version, d.Decision = "req_1", "resolved", 2, &d.Options[0].ID
		same(t, &d)
	})
	t.Run("every optional member set", func(t *testing.T) {
		r := fullRecord()
		direct, ok, def := api.ActionCanonicalBoth(r)
		if !ok || !bytes.Equal(direct, def) {
			t.Fatalf("ok %v\ndirect      %s\nby exclusion %s", ok, direct, def)
		}
	})
	t.Run("a writer that declines", func(t *testing.T) {
		for name, r := range map[string]*api.Request{
			"invalid UTF-8":              {Title: "a\xffb"},
			"a source_ref name in Greek": {SourceRef: map[string]string{"λ": "x", "a": "y"}},
		} {
			if _, ok, _ := api.ActionCanonicalBoth(r); ok {
				t.Errorf("%s: the direct writer wrote it", name)
			}
			same(t, r)
		}
	})
	t.Run("random records", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(42, 7))
		written := 0
		for range 3000 {
			r := randomRecord(rng)
			if _, ok, _ := api.ActionCanonicalBoth(r); ok {
				written++
			}
			same(t, r)
		}
		if written < 1000 {
			t.Fatalf("the direct writer wrote %d of 3000 random records: too few to hold it to anything", written)
		}
		t.Logf("the direct writer wrote %d of 3000 random records", written)
	})
}

// FuzzActionCanonical holds the direct writer to the definition over
// strings a filer chooses.
func FuzzActionCanonical(f *testing.F) {
	f.Add("Run: git push", "git push origin main", "cwd", "/srv/app", "once", "Allow <once> & \"all\"", uint64(1))
	f.Add("\u2028\x00\x1f\x7f", "\\", "session", "\xff", "", "é", uint64(0))
	f.Fuzz(func(t *testing.T, title, command, refName, refValue, optID, label string, bits uint64) {
		rng := rand.New(rand.NewPCG(bits, 1))
		r := randomRecord(rng)
		r.Title, r.Command = title, command
		r.SourceRef = map[string]string{"tool_use_id": label}
		if utf8.ValidString(refName) {
			r.SourceRef[refName] = refValue
		}
		if len(r.Options) > 0 {
			r.Options[0].ID, r.Options[0].Label = optID, label
		}
		direct, ok, def := api.ActionCanonicalBoth(r)
		if ok && !bytes.Equal(direct, def) {
			t.Fatalf("direct %s\nby exclusion %s", direct, def)
		}
	})
}

func fullRecord() *api.Request {
	s := func(v string) *string { return &v }
	return &api.Request{
		ID: "req_1", Kind: "approval", Status: "open", Version: 3, Title: "Deploy", Summary: "sum", Detail: "det",
		Risk: s("high"), Tool: "Bash", Command: "deploy prod",
		Options: []api.Option{
			{ID: "once", Label: "Allow once", Effect: "allow", Saves: "Bash(deploy:*)", Remember: &api.RememberOffer{Scope: "session", For: "1h"}},
			{ID: "deny", Label: "Deny"},
		},
		AllowAnswer: true, DefaultOption: s("deny"), Source: "session", SourceRef: map[string]string{"session": "s", "cwd": "/w", "b": "", "a_b": "1"},
		RuntimeID: s("rt_1"), PendingID: s("p_1"), Sealed: true, ActionDigest: "x", DecidedDigest: s("y"),
		Approvals: &api.Approvals{Groups: []string{"release", "sre"}, Required: 2, Note: s("required"),
			Escalate: []api.EscalationStep{{After: "10m", To: &api.EscalationTo{Groups: []string{"oncall"}}}, {After: "1h", Then: "halt"}, {After: "2h", To: &api.EscalationTo{}}},
			Votes:    []api.Vote{{By: "operator:a", Decision: "once", Digest: "d"}}},
		Escalation: &api.Escalation{Step: 1}, GrantID: s("rem_1"),
	}
}

// randomRecord is a record whose members are each set or not, with strings
// drawn from a set that holds every kind of character the canonical form
// treats apart.
func randomRecord(rng *rand.Rand) *api.Request {
	pieces := []string{"", "a", "Z", " ", "\"", "\\", "/", "\x00", "\b", "\t", "\n", "\f", "\r", "\x1f", "\x7f", "<", ">", "&",
		"é", "\u2028", "\u2029", "\ufeff", "😀", "\U0010ffff", "1e3", "null", "\xff", "\xc3"}
	valid := len(pieces) - 2
	if rng.IntN(8) == 0 { // one record in eight may hold invalid UTF-8
		valid = len(pieces)
	}
	str := func() string {
		var b []byte
		for range rng.IntN(4) {
			b = append(b, pieces[rng.IntN(valid)]...)
		}
		return string(b)
	}
	ptr := func() *string {
		if rng.IntN(3) == 0 {
			return nil
		}
		v := str()
		return &v
	}
	strs := func() []string {
		if rng.IntN(4) == 0 {
			return nil
		}
		out := []string{}
		for range rng.IntN(3) {
			out = append(out, str())
		}
		return out
	}
	r := &api.Request{ID: str(), Kind: str(), Status: str(), Version: rng.IntN(5), Title: str(), Summary: str(), Detail: str(),
		Risk: ptr(), Tool: str(), Command: str(), AllowAnswer: rng.IntN(2) == 0, DefaultOption: ptr(), Decision: ptr(),
		Source: str(), RuntimeID: ptr(), PendingID: ptr(), Sealed: rng.IntN(2) == 0, DecidedDigest: ptr(), GrantID: ptr()}
	if rng.IntN(4) > 0 {
		r.Options = []api.Option{}
		for range rng.IntN(4) {
			o := api.Option{ID: str(), Label: str(), Effect: str(), Saves: str()}
			if rng.IntN(2) == 0 {
				o.Remember = &api.RememberOffer{Scope: str(), For: str()}
			}
			r.Options = append(r.Options, o)
		}
	}
	if rng.IntN(4) > 0 {
		r.SourceRef = map[string]string{}
		for range rng.IntN(6) {
			// Names stay valid UTF-8: two invalid names marshal to the same
			// name (U+FFFD), which the definition cannot canonicalise (the
			// API refuses a body with invalid UTF-8 before it gets there).
			if k := str(); utf8.ValidString(k) {
				r.SourceRef[k] = str()
			}
		}
	}
	if rng.IntN(2) == 0 {
		a := &api.Approvals{Groups: strs(), Required: rng.IntN(4) - 1, Note: ptr()}
		if rng.IntN(2) == 0 {
			for range rng.IntN(3) {
				s := api.EscalationStep{After: str(), Then: str()}
				if rng.IntN(2) == 0 {
					s.To = &api.EscalationTo{Groups: strs()}
				}
				a.Escalate = append(a.Escalate, s)
			}
		}
		if rng.IntN(2) == 0 {
			a.Votes = []api.Vote{{By: str(), Decision: str(), Digest: str()}}
		}
		r.Approvals = a
	}
	return r
}
