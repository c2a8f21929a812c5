package hookanswer_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
)

// permissionInput is a PermissionRequest input with the given suggestions,
// shaped like the recorded one (cmd/gatehouse/testdata/claude-code).
func permissionInput(t *testing.T, suggestions string) *hookanswer.ClaudeCodeHookInput {
	t.Helper()
	in, err := hookanswer.ParseClaudeCodeHook(strings.NewReader(`{"session_id":"s1","cwd":"/home/dev/project","prompt_id":"p1",
		"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"git push origin main"},
		"permission_suggestions":` + suggestions + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// decided is the record the server would return after the operator chose option.
func decided(in *hookanswer.ClaudeCodeHookInput, option string) *api.Request {
	n := in.NewRequest(time.Minute)
	by := "operator:alice"
	r := n.AsFiled(nil)
	r.ID, r.Status, r.Decision, r.DecidedBy = "req_1", "resolved", &option, &by
	r.ActionDigest = api.ActionDigest(r)
	r.DecidedDigest = &r.ActionDigest
	return r
}

// edited is decided after an edit: the server's record is consistent (its
// decided_digest is the edited version's), but it is not what the hook filed.
func edited(r *api.Request) *api.Request {
	r.ActionDigest = api.ActionDigest(r)
	r.DecidedDigest = &r.ActionDigest
	return r
}

func optionIDs(in *hookanswer.ClaudeCodeHookInput) string {
	var ids []string
	for _, o := range in.NewRequest(time.Minute).Options {
		ids = append(ids, o.ID)
	}
	return strings.Join(ids, ",")
}

func answer(t *testing.T, in *hookanswer.ClaudeCodeHookInput, option string) string {
	t.Helper()
	b, err := json.Marshal(in.Answer(decided(in, option)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClaudeCodeScopes(t *testing.T) {
	t.Run("suggestions that are not allow rules offer no scope", func(t *testing.T) {
		// What Claude Code 2.1.328 suggests for `touch made.txt`: a mode for the
		// whole session, far wider than one rule.
		in := permissionInput(t, `[{"type":"addDirectories","directories":["/home/dev/project"],"destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]`)
		if got := optionIDs(in); got != "once,deny" {
			t.Fatalf("options %s, want once,deny", got)
		}
		if got := answer(t, in, "session"); strings.Contains(got, "updatedPermissions") {
			t.Fatalf("an option not offered still saved something: %s", got)
		}
	})
	t.Run("a session suggestion offers the session scope only", func(t *testing.T) {
		in := permissionInput(t, `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"}],"behavior":"allow","destination":"session"}]`)
		if got := optionIDs(in); got != "once,session,deny" {
			t.Fatalf("options %s", got)
		}
		want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"}],"behavior":"allow","destination":"session"}]}}}`
		if got := answer(t, in, "session"); got != want {
			t.Fatalf("session answer\n got %s\nwant %s", got, want)
		}
	})
	t.Run("shared project settings and several rules are all shown", func(t *testing.T) {
		in := permissionInput(t, `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"},{"toolName":"Read"}],"behavior":"allow","destination":"projectSettings"}]`)
		opts := in.NewRequest(time.Minute).Options
		if opts[1].Label != "Allow for this session (allows Bash(git push *), Read until the session ends)" ||
			opts[2].Label != "Allow for project (saves Bash(git push *), Read to .claude/settings.json)" {
			t.Fatalf("labels %q / %q", opts[1].Label, opts[2].Label)
		}
		want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"},{"toolName":"Read"}],"behavior":"allow","destination":"session"}]}}}`
		if got := answer(t, in, "session"); got != want {
			t.Fatalf("session answer\n got %s\nwant %s", got, want)
		}
	})
	t.Run("a rule too long to show on a label is not offered", func(t *testing.T) {
		long := strings.Repeat("x", 90)
		in := permissionInput(t, fmt.Sprintf(`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"%s *"}],"behavior":"allow","destination":"localSettings"}]`, long))
		if got := optionIDs(in); got != "once,deny" {
			t.Fatalf("options %s", got)
		}
	})
	t.Run("a rule with a control character is not offered", func(t *testing.T) {
		in := permissionInput(t, `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push\nrm -rf *"}],"behavior":"allow","destination":"localSettings"}]`)
		if got := optionIDs(in); got != "once,deny" {
			t.Fatalf("options %s", got)
		}
	})
	t.Run("a deny suggestion is never turned into an allow", func(t *testing.T) {
		in := permissionInput(t, `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"}],"behavior":"deny","destination":"localSettings"}]`)
		if got := optionIDs(in); got != "once,deny" {
			t.Fatalf("options %s", got)
		}
	})
	t.Run("a record changed after filing is no decision", func(t *testing.T) {
		in := permissionInput(t, `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"}],"behavior":"allow","destination":"localSettings"}]`)
		r := decided(in, "project")
		r.Options[2].Label = "Allow once"
		if out := in.Answer(edited(r)); out != nil {
			b, _ := json.Marshal(out)
			t.Fatalf("a relabelled option answered %s, want no answer (Claude Code asks)", b)
		}
		r = decided(in, "once")
		r.Command = "git push origin main --force"
		if out := in.Answer(edited(r)); out != nil {
			t.Fatal("a record whose command was edited still answered")
		}
		r = decided(in, "once")
		r.DecidedDigest = nil
		if out := in.Answer(r); out != nil {
			t.Fatal("a decision without decided_digest still answered")
		}
	})
}
