package store_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// docApproverRules is the example rules file of docs/approvers.md.
func docApproverRules(t *testing.T) (string, string) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/approvers.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- approvers-example")
	if !ok {
		t.Fatal("docs/approvers.md has no approvers-example marker")
	}
	_, after, _ = strings.Cut(after, "```yaml\n")
	src, rest, _ := strings.Cut(after, "```\n")
	_, table, ok := strings.Cut(rest, "<!-- approvals -->")
	if !ok {
		t.Fatal("docs/approvers.md has no approvals marker")
	}
	return src, table
}

func TestApproversDocExample(t *testing.T) {
	src, table := docApproverRules(t)
	rs := mustRules(t, src)
	rows := 0
	for _, line := range strings.Split(table, "\n")[3:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cmd, what, ok := splitRow(line)
		if !ok {
			t.Fatalf("row %q is not | `command` | what |", line)
		}
		rows++
		t.Run(cmd, func(t *testing.T) {
			v := rs.Evaluate(shellReq(cmd))
			rule, _, _ := strings.Cut(what, ":")
			switch {
			case rule == "operator":
				if v.Action != "" {
					t.Fatalf("%+v, the doc says %s", v, what)
				}
			case v.Rule != rule:
				t.Fatalf("%+v, the doc says %s", v, what)
			case strings.Contains(what, "2 release votes"):
				a := v.Approvers
				if v.Action != rules.RuleRequire || a == nil || a.Required != 2 || !slices.Equal(a.Groups, []string{"release"}) ||
					(a.Note == models.NoteRequired) != strings.Contains(what, "note") {
					t.Fatalf("%+v %+v, the doc says %s", v, a, what)
				}
			case v.Action != rules.RuleApprove:
				t.Fatalf("%+v, the doc says %s", v, what)
			}
		})
	}
	if rows < 5 {
		t.Fatalf("only %d rows in the doc's table", rows)
	}

	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		s.Rules = rules.NewRuleSet(rs)
		bob := voter(t, s, "bob", "release")
		dave := voter(t, s, "dave", "release")
		voter(t, s, "alice") // the operator the agent acts for
		tok, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleAgent, Name: "alices-agent", For: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		filer := tok.Principal()
		push := models.NewRequest{Kind: models.KindPermission, Tool: "Bash", Command: "git push origin main"}

		t.Run("a require rule gives the filing its policy and audits it", func(t *testing.T) {
			r := file(t, s, filer, push)
			if r.Approvers == nil || r.Approvers.Required != 2 || r.Approvers.Note != models.NoteRequired || !r.Open() {
				t.Fatalf("%+v", r)
			}
			trail, _ := s.AuditTrail(ctx, r.ID)
			if len(trail) != 2 || trail[1].Action != "require" {
				t.Fatalf("trail: %+v", trail)
			}
			got, err := voteAs(s, bob, r, 1, "once", "diff checked")
			if err != nil || !got.Open() {
				t.Fatalf("bob: %+v %v", got, err)
			}
			got, err = voteAs(s, dave, got, 2, "once", "ok")
			if err != nil || got.Status != models.StatusResolved {
				t.Fatalf("dave: %+v %v", got, err)
			}
		})

		t.Run("the filer may make it stricter", func(t *testing.T) {
			n := push
			n.Approvers = &models.Approvers{Groups: []string{"release"}, Required: 3}
			r := file(t, s, filer, n)
			if r.Approvers.Required != 3 || r.Approvers.Note != models.NoteRequired {
				t.Fatalf("%+v", r.Approvers)
			}
		})

		t.Run("the filer may not loosen it", func(t *testing.T) {
			for name, a := range map[string]*models.Approvers{
				"another group":   {Groups: []string{"sre"}, Required: 2},
				"a group besides": {Groups: []string{"release", "sre"}, Required: 2},
			} {
				n := push
				n.Title, n.Options, n.Approvers = "x", allowDeny(), a
				if _, _, err := s.CreateRequest(ctx, filer, n, ""); models.ErrorCode(err) != models.ECodeInvalid {
					t.Errorf("%s: %v, want %s", name, err, models.ECodeInvalid)
				}
			}
			n := push
			n.Approvers = &models.Approvers{Required: 1}
			r := file(t, s, filer, n)
			if r.Approvers.Required != 2 || !slices.Equal(r.Approvers.Groups, []string{"release"}) {
				t.Fatalf("a looser filer weakened the rule: %+v", r.Approvers)
			}
		})

		t.Run("an approve rule defers on a filing with a policy", func(t *testing.T) {
			n := models.NewRequest{Kind: models.KindPermission, Tool: "Bash", Command: "git status", Approvers: &models.Approvers{Required: 1}}
			r := file(t, s, filer, n)
			if !r.Open() {
				t.Fatalf("the approve rule decided a request with a policy: %+v", r)
			}
		})
	})
}

func TestRequireRuleErrors(t *testing.T) {
	cases := []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"require without approvers", "rules:\n  - name: a\n    action: require\n", 2, 5, "no approvers"},
		{"approvers on approve", "rules:\n  - name: a\n    action: approve\n    approvers: {required: 2}\n", 4, 17, "belong to action require"},
		{"bad required", "rules:\n  - name: a\n    action: require\n    approvers:\n      required: 99\n", 5, 7, "required must be 1 to 20"},
		{"bad note", "rules:\n  - name: a\n    action: require\n    approvers:\n      note: maybe\n", 5, 7, `note must be "required"`},
		{"then on require", "rules:\n  - name: a\n    action: require\n    then: deny\n    approvers: {required: 2}\n", 3, 13, "do not belong to action require"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := rules.ParseRules("rules.yaml", []byte(c.src))
			var re *rules.RuleError
			if !errors.As(err, &re) {
				t.Fatalf("err %v (%T), want a RuleError", err, err)
			}
			if re.Line != c.line || re.Column != c.col || !strings.Contains(re.Msg, c.msg) {
				t.Fatalf("got %v, want %d:%d %q", re, c.line, c.col, c.msg)
			}
		})
	}
}

// splitRow reads a doc table row | `command` | verdict |.
func splitRow(line string) (cmd, verdict string, ok bool) {
	line = strings.TrimPrefix(line, "| `")
	cmd, rest, ok := strings.Cut(line, "` | ")
	if !ok {
		return "", "", false
	}
	cmd = strings.NewReplacer(`\|`, "|", `\n`, "\n").Replace(cmd)
	return cmd, strings.TrimSuffix(strings.TrimSpace(rest), " |"), true
}

// shellReq is a permission request to run cmd in Bash.
func shellReq(cmd string) *models.Request {
	return &models.Request{Kind: "permission", Risk: "medium", Title: "Run a command", Options: allowDeny(), CreatedBy: "agent:a1", Tool: "Bash", Command: cmd}
}
