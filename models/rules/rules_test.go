package rules_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
)

const sampleRules = `rules:
  - name: deny-force-push
    match:
      tool: Bash
      command: 'git push .*--force'
    action: deny
  - name: approve-git-read
    match:
      tool: [Bash]
      command: '^git (status|diff|log)\b'
    action: approve
  - name: always-for-tests
    match:
      text: '(?i)run the tests'
    action: approve
    option: always
  - name: hold-deploys
    match:
      kind: [approval, permission]
      risk: high
    action: hold
    window: 2m
    then: deny
  - name: ci-runtime
    match:
      runtime: ci
    action: hold
    window: 30s
    then: once
`

func mustRules(t testing.TB, src string) *rules.Rules {
	t.Helper()
	rs, err := rules.ParseRules("rules.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return rs
}

func req(mod func(r *models.Request)) *models.Request {
	r := &models.Request{Kind: "permission", Risk: "medium", Title: "Run a command", Options: allowDeny(), CreatedBy: "agent:a1"}
	if mod != nil {
		mod(r)
	}
	return r
}

func TestRulesEvaluate(t *testing.T) {
	rs := mustRules(t, sampleRules)
	cases := []struct {
		name   string
		r      *models.Request
		want   rules.Verdict
		reason string // a substring of Deferred
	}{
		{"nothing matches: the operator decides", req(func(r *models.Request) { r.Tool, r.Command = "Bash", "rm -rf /" }), rules.Verdict{}, ""},
		{"deny by command", req(func(r *models.Request) { r.Tool, r.Command = "Bash", "git push origin main --force" }),
			rules.Verdict{Rule: "deny-force-push", Line: 2, Action: "deny", Option: "deny", Effect: "deny"}, ""},
		{"first match wins", req(func(r *models.Request) { r.Tool, r.Command, r.Risk = "Bash", "git status", "high" }),
			rules.Verdict{Rule: "approve-git-read", Line: 7, Action: "approve", Option: "once", Effect: "allow"}, ""},
		{"tool must match exactly", req(func(r *models.Request) { r.Tool, r.Command = "bash", "git status" }), rules.Verdict{}, ""},
		{"text matches the summary", req(func(r *models.Request) {
			r.Summary = "Please RUN THE TESTS"
			r.Options = append(allowDeny(), models.Option{ID: "always", Label: "Always", Effect: "allow"})
		}), rules.Verdict{Rule: "always-for-tests", Line: 12, Action: "approve", Option: "always", Effect: "allow"}, ""},
		{"named option not offered: defers", req(func(r *models.Request) { r.Title = "run the tests" }),
			rules.Verdict{Rule: "always-for-tests", Line: 12}, `does not offer option "always"`},
		{"hold picks then", req(func(r *models.Request) { r.Risk = "high" }),
			rules.Verdict{Rule: "hold-deploys", Line: 17, Action: "hold", Option: "deny", Effect: "deny", Window: 2 * time.Minute}, ""},
		{"kind list", req(func(r *models.Request) { r.Kind, r.Risk = "question", "high" }), rules.Verdict{}, ""},
		{"runtime by filer name", req(func(r *models.Request) { r.CreatedBy = "runtime:ci" }),
			rules.Verdict{Rule: "ci-runtime", Line: 24, Action: "hold", Option: "once", Effect: "allow", Window: 30 * time.Second}, ""},
		{"runtime by runtime id", req(func(r *models.Request) { r.RuntimeID = ptr("ci") }),
			rules.Verdict{Rule: "ci-runtime", Line: 24, Action: "hold", Option: "once", Effect: "allow", Window: 30 * time.Second}, ""},
		{"no deny option: defers", req(func(r *models.Request) {
			r.Tool, r.Command = "Bash", "git push --force"
			r.Options = []models.Option{{ID: "once", Label: "Allow", Effect: "allow"}}
		}), rules.Verdict{Rule: "deny-force-push", Line: 2}, "no option with effect deny"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := rs.Evaluate(c.r)
			reason := got.Deferred
			got.Deferred = ""
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if c.reason == "" && reason != "" || !strings.Contains(reason, c.reason) {
				t.Fatalf("deferred %q, want %q", reason, c.reason)
			}
		})
	}

	t.Run("named option with the opposite effect defers", func(t *testing.T) {
		rs := mustRules(t, "rules:\n  - name: a\n    action: approve\n    option: deny\n")
		v := rs.Evaluate(req(nil))
		if v.Action != "" || !strings.Contains(v.Deferred, "effect deny") {
			t.Fatalf("%+v", v)
		}
	})

	t.Run("empty files match nothing", func(t *testing.T) {
		for _, src := range []string{"", "# no rules yet\n", "rules: []\n", "rules:\n"} {
			rs := mustRules(t, src)
			if rs.Len() != 0 || rs.Evaluate(req(nil)) != (rules.Verdict{}) {
				t.Fatalf("%q: %d rules", src, rs.Len())
			}
		}
		var none *rules.Rules
		if none.Evaluate(req(nil)) != (rules.Verdict{}) {
			t.Fatal("nil rules matched")
		}
	})

	t.Run("evaluation of a request that is not a shell command does not allocate", func(t *testing.T) {
		// A Bash command is parsed (TestShellRules); other tools' commands are
		// matched as written.
		if raceEnabled {
			// The race detector's sync.Pool drops what is put back at random,
			// so the regexp package's pooled machines are allocated again; the
			// runs without -race count.
			return
		}
		r := req(func(r *models.Request) { r.Tool, r.Command = "Read", "git log -1" })
		if n := testing.AllocsPerRun(100, func() { rs.Evaluate(r) }); n != 0 {
			t.Fatalf("%v allocations per evaluation", n)
		}
	})
}

func TestRulesErrors(t *testing.T) {
	cases := []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"syntax", "rules:\n  - name: a\n    match: [1\n", 3, 12, "']' not found"},
		{"unknown field", "rules:\n  - name: a\n    action: approve\n    bogus: 1\n", 4, 5, `unknown field "bogus"`},
		{"rules not a list", "rules: 5\n", 1, 8, "sequence"},
		{"bad regexp", "rules:\n  - name: a\n    match:\n      command: 'git ('\n    action: approve\n", 4, 16, "bad regular expression"},
		{"bad action", "rules:\n  - name: a\n    action: allow\n", 3, 13, `action "allow"`},
		{"no action", "rules:\n  - name: a\n", 2, 5, "no action"},
		{"duplicate name", "rules:\n  - name: a\n    action: deny\n  - name: a\n    action: deny\n", 4, 11, "already used by the rule at line 2"},
		{"hold without window", "rules:\n  - name: a\n    action: hold\n    then: deny\n", 2, 5, "no window"},
		{"hold without then", "rules:\n  - name: a\n    action: hold\n    window: 2m\n", 2, 5, "no then"},
		{"bad window", "rules:\n  - name: a\n    action: hold\n    window: soon\n    then: deny\n", 4, 13, "not a positive duration"},
		{"window on approve", "rules:\n  - name: a\n    action: approve\n    window: 2m\n", 3, 13, "belong to action hold"},
		{"bad kind", "rules:\n  - name: a\n    match:\n      kind: [permission, chat]\n    action: deny\n", 4, 13, `"chat" is not a kind`},
		{"bad risk", "rules:\n  - name: a\n    match:\n      risk: severe\n    action: deny\n", 4, 13, `"severe"`},
		{"bad name", "rules:\n  - name: 'has space'\n    action: deny\n", 2, 11, "must match"},
		// Found by FuzzParseRules: go-yaml dereferenced nil on a tagged scalar
		// where the list goes, and the server would have died loading it.
		{"tagged scalar for the list", "rules:\n  ! 0\n000000008: 000", 2, 3, "YAML tags"},
		{"tag on a rule", "rules:\n  - !!map {name: a, action: deny}\n", 2, 5, "YAML tags such as !!map"},
		{"two documents", "rules: []\n---\nrules: []\n", 1, 1, "one YAML document"},
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
			want := "rules.yaml:" + strconv.Itoa(c.line) + ":" + strconv.Itoa(c.col) + ": "
			if !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("%q does not start with %q", err.Error(), want)
			}
		})
	}

	t.Run("every problem is reported", func(t *testing.T) {
		_, err := rules.ParseRules("r.yaml", []byte("rules:\n  - name: a\n    action: allow\n  - name: b\n    action: nope\n"))
		if err == nil || strings.Count(err.Error(), "\n") != 1 {
			t.Fatalf("want two errors: %v", err)
		}
	})
}

func TestRuleDescribe(t *testing.T) {
	got := []string{}
	for _, r := range mustRules(t, sampleRules+"  - name: any\n    action: deny\n").List() {
		got = append(got, r.Describe())
	}
	want := []string{
		"tool Bash, command /git push .*--force/ → deny",
		`tool Bash, command /^git (status|diff|log)\b/ → approve`,
		"text /(?i)run the tests/ → approve with always",
		"kind approval or permission, risk high → hold for 2m0s, then deny",
		"runtime ci → hold for 30s, then once",
		"any request → deny",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
}
