package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/api"
)

// mergeCall is an MCP tool call as an ACP agent asks for it: kind other,
// the tool's name as the title, the arguments only in rawInput.
func mergeCall(repo string, pr int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"sessionId":"s1","toolCall":{"toolCallId":"call_%d","title":"mcp__github__merge_pull_request","kind":"other","rawInput":{"repo":%q,"pullNumber":%d}},
		"options":[{"optionId":"always","name":"Always Allow","kind":"allow_always"},{"optionId":"once","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}`, pr, repo, pr))
}

// widest is the option with the most reach the card offers: allow_always
// when there is one.
func widest(r *api.Request) string {
	for _, o := range r.Options {
		if o.ID == acp.KindAllowAlways {
			return o.ID
		}
	}
	return acp.KindAllowOnce
}

// A remembered allow covers only a call the operator saw and that is fully
// determined by what is remembered: never a title, whatever the arguments.
func TestAllowAlwaysRemembersOnlyWhatDeterminesTheCall(t *testing.T) {
	zed := acp.Who{Editor: "zed", Cwd: "/home/dev/project"}
	t.Run("an MCP call's allow_always does not allow the same tool with other arguments", func(t *testing.T) {
		s := newServer(t)
		ctx := context.Background()
		p, err := acp.ParsePermission(mergeCall("site", 7), zed)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.agent.File(ctx, p.Request, "merge-7")
		if err != nil {
			t.Fatal(err)
		}
		s.decide(t, r, widest(r))
		p2, err := acp.ParsePermission(mergeCall("prod-infra", 666), zed)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := s.agent.File(ctx, p2.Request, "merge-666")
		if err != nil {
			t.Fatal(err)
		}
		if r2.Status != "open" {
			t.Fatalf("the merge of prod-infra#666 was %s via %v at once, after an allow of site#7", r2.Status, r2.DecidedVia)
		}
		if grants, err := s.operator.ListRemembered(ctx); err != nil || len(grants) != 0 {
			t.Fatalf("remembered %+v, %v; want nothing for a call its title does not determine", grants, err)
		}
	})

	for name, c := range map[string]struct {
		toolCall string
		remember bool
	}{
		"a shell command alone":                     {`{"toolCallId":"c","title":"git push","kind":"execute","rawInput":{"command":"git push","description":"push"}}`, true},
		"Codex's argv in the session's cwd":         {`{"toolCallId":"c","title":"git push","kind":"execute","rawInput":{"call_id":"x","command":["/bin/bash","-lc","git push"],"cwd":"/home/dev/project","reason":"r"}}`, true},
		"a title alone (no rawInput)":               {`{"toolCallId":"c","title":"git push","kind":"execute"}`, false},
		"a command run in another directory":        {`{"toolCallId":"c","title":"git push","kind":"execute","rawInput":{"command":"git push","cwd":"/srv/prod"}}`, false},
		"a command with arguments beside it":        {`{"toolCallId":"c","title":"git push","kind":"execute","rawInput":{"command":"git push","env":{"GIT_SSH_COMMAND":"x"}}}`, false},
		"an edit (the path is not what is written)": {`{"toolCallId":"c","title":"Edit a","kind":"edit","rawInput":{"file_path":"/a","new_string":"x"}}`, false},
		"an MCP tool with a command argument":       {`{"toolCallId":"c","title":"mcp__db__run","kind":"other","rawInput":{"command":"DROP TABLE t"}}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := acp.ParsePermission(json.RawMessage(`{"sessionId":"s","toolCall":`+c.toolCall+`,
				"options":[{"optionId":"a","name":"Always","kind":"allow_always"},{"optionId":"o","name":"Once","kind":"allow_once"},{"optionId":"r","name":"Reject","kind":"reject_once"}]}`), zed)
			if err != nil {
				t.Fatal(err)
			}
			offered := false
			for _, o := range p.Request.Options {
				if o.ID == acp.KindAllowAlways {
					offered = o.Remember != nil
				}
			}
			if offered != c.remember {
				t.Fatalf("allow_always offered to remember: %v, want %v (options %+v)", offered, c.remember, p.Request.Options)
			}
			if c.remember && p.AgentOption[acp.KindAllowAlways] != "o" {
				t.Fatalf("allow_always answers the agent %q, want its allow_once", p.AgentOption[acp.KindAllowAlways])
			}
		})
	}
}

// An agent that offers allow_always but no allow_once is never answered its
// allow_always, a standing rule inside the agent that Gatehouse cannot see:
// the operator can only refuse.
func TestAllowAlwaysWithoutAllowOnce(t *testing.T) {
	p, err := acp.ParsePermission(json.RawMessage(`{"sessionId":"s","toolCall":{"toolCallId":"c","title":"git push","kind":"execute","rawInput":{"command":"git push"}},
		"options":[{"optionId":"always","name":"Always Allow","kind":"allow_always"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}`), acp.Who{})
	if err != nil {
		t.Fatal(err)
	}
	for id, agent := range p.AgentOption {
		if agent == "always" {
			t.Fatalf("Gatehouse option %q answers the agent its allow_always", id)
		}
	}
	if len(p.Request.Options) != 1 || p.Request.Options[0].Effect != "deny" {
		t.Fatalf("options %+v, want the reject alone", p.Request.Options)
	}
	if _, err := acp.ParsePermission(json.RawMessage(`{"sessionId":"s","toolCall":{"toolCallId":"c","title":"x","kind":"execute","rawInput":{"command":"ls"}},
		"options":[{"optionId":"always","name":"Always Allow","kind":"allow_always"}]}`), acp.Who{}); err == nil {
		t.Fatal("filed a request whose only answer would be the agent's allow_always")
	}
}
