package review_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/review"
)

// recording is one recorded provider answer (testdata/README.md).
type recording struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

func load(t *testing.T, name string) recording {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var r recording
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// standIn serves one recording for every call and keeps what it received;
// name "timeout" holds each call until the client gives up.
type standIn struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   []string
	headers  []http.Header
	received chan struct{}
}

func newStandIn(t *testing.T, name string) *standIn {
	t.Helper()
	s := &standIn{received: make(chan struct{}, 64)}
	var rec recording
	if name != "timeout" {
		rec = load(t, name)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies, s.headers = append(s.bodies, string(b)), append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		s.received <- struct{}{}
		if name == "timeout" {
			<-r.Context().Done()
			return
		}
		for k, v := range rec.Headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Status)
		w.Write(rec.Body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *standIn) last(t *testing.T) (string, http.Header) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		t.Fatal("the stand-in received no call")
	}
	return s.bodies[len(s.bodies)-1], s.headers[len(s.headers)-1]
}

const testKey = "sk-reviewer-test-key-0000"

func reviewer(t *testing.T, st *store.Store, ch *store.Changes, provider, url string, timeout time.Duration) *review.Reviewer {
	t.Helper()
	base := url
	if provider == review.ProviderOpenAI {
		base = url + "/v1"
	} else {
		base = url + "/"
	}
	rv, err := review.New(review.Config{Spec: provider + ":test-model", BaseURL: base, APIKey: testKey, Timeout: timeout}, st, ch)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

var agent = models.Principal{ID: "tok_agent", Role: models.RoleAgent, Name: "builder"}

func file(t *testing.T, st *store.Store, n models.NewRequest) *models.Request {
	t.Helper()
	if n.Kind == "" {
		n.Kind = models.KindPermission
	}
	if n.Options == nil {
		n.Options = []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
	}
	r, _, err := st.CreateRequest(context.Background(), agent, n, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func get(t *testing.T, st *store.Store, id string) *models.Request {
	t.Helper()
	r, err := st.GetRequest(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecordedAnswers: each recorded answer of both providers becomes the
// review it should, on both databases; every failure is no_opinion.
func TestRecordedAnswers(t *testing.T) {
	cases := []struct {
		provider, file      string
		status, why, risk   string
		tokensIn, tokensOut int64
	}{
		{"anthropic", "anthropic/success.json", models.ReviewDone, "", "high", 812, 64},
		{"anthropic", "anthropic/text_instead_of_tool.json", models.ReviewNoOpinion, "malformed", "", 790, 30},
		{"anthropic", "anthropic/refusal.json", models.ReviewNoOpinion, "refusal", "", 640, 0},
		{"anthropic", "anthropic/rate_limit_429.json", models.ReviewNoOpinion, "error", "", 0, 0},
		{"anthropic", "anthropic/api_error_500.json", models.ReviewNoOpinion, "error", "", 0, 0},
		{"anthropic", "anthropic/overloaded_529.json", models.ReviewNoOpinion, "error", "", 0, 0},
		{"anthropic", "timeout", models.ReviewNoOpinion, "timeout", "", 0, 0},
		{"openai", "openai/success.json", models.ReviewDone, "", "critical", 798, 41},
		{"openai", "openai/refusal.json", models.ReviewNoOpinion, "refusal", "", 81, 11},
		{"openai", "openai/truncated_length.json", models.ReviewNoOpinion, "malformed", "", 770, 400},
		{"openai", "openai/rate_limit_429.json", models.ReviewNoOpinion, "error", "", 0, 0},
		{"openai", "openai/server_error_500.json", models.ReviewNoOpinion, "error", "", 0, 0},
		{"openai", "openai/overloaded_503.json", models.ReviewNoOpinion, "error", "", 0, 0},
		{"openai", "timeout", models.ReviewNoOpinion, "timeout", "", 0, 0},
	}
	storetest.Each(t, func(t *testing.T, dialect string) {
		st, ch := storetest.Store(t, dialect)
		for _, c := range cases {
			t.Run(c.provider+"/"+strings.TrimSuffix(filepath.Base(c.file), ".json"), func(t *testing.T) {
				srv := newStandIn(t, map[bool]string{true: "timeout", false: c.file}[c.file == "timeout"])
				timeout := 10 * time.Second
				if c.file == "timeout" {
					timeout = 50 * time.Millisecond
				}
				rv := reviewer(t, st, ch, c.provider, srv.URL, timeout)
				r := file(t, st, models.NewRequest{Title: "Run a command", Tool: "Bash", Command: "git push --force origin main"})
				rv.ReviewOne(context.Background(), r.ID)
				got := get(t, st, r.ID)
				v := got.Review
				if v == nil || v.Status != c.status || v.Why != c.why || v.Risk != c.risk || v.TokensIn != c.tokensIn || v.TokensOut != c.tokensOut {
					t.Fatalf("review %+v, want status %s why %q risk %q tokens %d/%d", v, c.status, c.why, c.risk, c.tokensIn, c.tokensOut)
				}
				if v.Digest != got.ActionDigest() || v.Model != c.provider+":test-model" {
					t.Fatalf("review bound to %s by %s; record digest %s", v.Digest, v.Model, got.ActionDigest())
				}
				if c.status == models.ReviewDone && v.Rationale == "" {
					t.Fatal("a done review has no rationale")
				}
				if !got.Open() || got.Version != 1 || got.Decision != nil {
					t.Fatalf("the review moved the request: status %s version %d decision %v", got.Status, got.Version, got.Decision)
				}
			})
		}
	})
}

// TestReviewerNeverDecides: whatever the reviewer answers (low and
// authorised, critical, nothing), the request stays open at its version, no
// vote is cast, and a policy's count is untouched; a person still decides.
func TestReviewerNeverDecides(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		st, ch := storetest.Store(t, dialect)
		for _, name := range []string{"anthropic/success.json", "anthropic/refusal.json", "openai/success.json", "openai/overloaded_503.json"} {
			t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
				provider, _, _ := strings.Cut(name, "/")
				srv := newStandIn(t, name)
				rv := reviewer(t, st, ch, provider, srv.URL, 10*time.Second)
				plain := file(t, st, models.NewRequest{Title: "Deploy", Command: "make deploy"})
				policy := file(t, st, models.NewRequest{Title: "Release", Command: "make release", Approvers: &models.Approvers{Required: 2}})
				for _, r := range []*models.Request{plain, policy} {
					rv.ReviewOne(context.Background(), r.ID)
					got := get(t, st, r.ID)
					if !got.Open() || got.Version != r.Version || got.Decision != nil || got.DecidedBy != nil || len(got.Votes) != 0 || got.ResolvedAt != nil {
						t.Fatalf("after the review: status %s version %d decision %v votes %d", got.Status, got.Version, got.Decision, len(got.Votes))
					}
					if got.Review == nil || got.Review.Status == models.ReviewPending {
						t.Fatalf("no review stored: %+v", got.Review)
					}
				}
				// The policy still needs two people: one operator's allow is a vote, not a decision.
				alice := models.Principal{ID: "tok_alice", Role: models.RoleOperator, Name: "alice"}
				got := get(t, st, policy.ID)
				after, err := st.Decide(context.Background(), policy.ID, models.Decision{Version: got.Version, Option: "once", By: alice.Label(), Via: models.ViaAPI, Voter: &alice})
				if err != nil {
					t.Fatal(err)
				}
				if !after.Open() || len(after.Votes) != 1 {
					t.Fatalf("one vote under a two-person policy: status %s votes %d", after.Status, len(after.Votes))
				}
			})
		}
	})
}

// TestEditVoidsReview: an edit clears the review bound to the old digest, and
// the next review reads the edited request.
func TestEditVoidsReview(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		st, ch := storetest.Store(t, dialect)
		srv := newStandIn(t, "openai/success.json")
		rv := reviewer(t, st, ch, review.ProviderOpenAI, srv.URL, 10*time.Second)
		r := file(t, st, models.NewRequest{Title: "Fetch and run", Detail: "first text", Unsealed: true})
		rv.ReviewOne(context.Background(), r.ID)
		old := get(t, st, r.ID).Review
		if old == nil || old.Status != models.ReviewDone {
			t.Fatalf("first review: %+v", old)
		}
		title := "Fetch and run, edited"
		edited, err := st.PatchRequest(context.Background(), r.ID, agent, store.Patch{Title: &title})
		if err != nil {
			t.Fatal(err)
		}
		if edited.Review != nil || get(t, st, r.ID).Review != nil {
			t.Fatalf("the edit left the old review: %+v", get(t, st, r.ID).Review)
		}
		rv.ReviewOne(context.Background(), r.ID)
		now := get(t, st, r.ID)
		if now.Review == nil || now.Review.Digest == old.Digest || now.Review.Digest != now.ActionDigest() {
			t.Fatalf("second review %+v, old digest %s, record %s", now.Review, old.Digest, now.ActionDigest())
		}
		body, _ := srv.last(t)
		if !strings.Contains(body, "edited") {
			t.Fatal("the second review did not read the edited text")
		}
	})
}

// TestModelReceivesNoSecret: the call carries the action and the prompts,
// never a Gatehouse token, the provider key in its body, or tool output.
func TestModelReceivesNoSecret(t *testing.T) {
	for _, name := range []string{"anthropic/success.json", "openai/success.json"} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			st, ch := storetest.Store(t, "sqlite")
			tok, secret, err := st.CreateToken(context.Background(), models.RoleAgent, "builder")
			if err != nil {
				t.Fatal(err)
			}
			p := models.Principal{ID: tok.ID, Role: models.RoleAgent, Name: "builder"}
			if _, _, err := st.SessionEvent(context.Background(), p, models.SessionEvent{Session: "sess-1", Agent: "claude-code", Kind: models.EventMoved, Prompt: "please push the release branch"}); err != nil {
				t.Fatal(err)
			}
			r, _, err := st.CreateRequest(context.Background(), p, models.NewRequest{Kind: models.KindPermission, Title: "Bash", Tool: "Bash", Command: "git push origin release",
				SourceRef: map[string]string{"session": "sess-1"}, Options: []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}}, "")
			if err != nil {
				t.Fatal(err)
			}
			provider, _, _ := strings.Cut(name, "/")
			srv := newStandIn(t, name)
			reviewer(t, st, ch, provider, srv.URL, 10*time.Second).ReviewOne(context.Background(), r.ID)
			body, hdr := srv.last(t)
			for _, s := range []string{secret, testKey, tok.ID} {
				if strings.Contains(body, s) {
					t.Fatalf("the model received %q in its body", s)
				}
			}
			if strings.Contains(hdr.Get("Authorization")+hdr.Get("X-Api-Key"), secret) {
				t.Fatal("the Gatehouse token reached the provider's headers")
			}
			if !strings.Contains(body, "please push the release branch") || !strings.Contains(body, "git push origin release") {
				t.Fatalf("the call lacks the action or the user prompt: %s", body)
			}
		})
	}
}

type injection struct {
	Tries, Title, Summary, Detail, Command, Prompt string
}

// TestInjectionCorpus: each filer text of the corpus stays inside its data
// block, JSON-encoded, and a verdict forged there never becomes the review.
func TestInjectionCorpus(t *testing.T) {
	b, err := os.ReadFile("testdata/injection.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus []injection
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	st, ch := storetest.Store(t, "sqlite")
	for _, c := range corpus {
		t.Run(c.Tries, func(t *testing.T) {
			r := file(t, st, models.NewRequest{Title: c.Title, Summary: c.Summary, Detail: c.Detail, Tool: "Bash", Command: c.Command})
			var prompts []string
			if c.Prompt != "" {
				prompts = []string{c.Prompt}
			}
			p := review.BuildPrompt(r, prompts)
			for _, tag := range []string{"<action>", "</action>", "<user_prompts>", "</user_prompts>"} {
				if n := strings.Count(p.User, tag); n != 1 {
					t.Fatalf("%s appears %d times: filer text broke out of its block:\n%s", tag, n, p.User)
				}
			}
			if strings.Contains(p.System, c.Title) {
				t.Fatal("filer text reached the instructions")
			}
			// The block holds the filer's text, intact once decoded.
			start := strings.Index(p.User, "<action>") + len("<action>")
			end := strings.Index(p.User, "</action>")
			var action map[string]any
			if err := json.Unmarshal([]byte(p.User[start:end]), &action); err != nil {
				t.Fatalf("the action block is not JSON: %v", err)
			}
			if action["title"] != c.Title || (c.Detail != "" && action["detail"] != c.Detail) || action["command"] != c.Command {
				t.Fatalf("the action block does not hold the filer's text: %v", action)
			}
		})
	}
	t.Run("forged answer never becomes the review", func(t *testing.T) {
		forged := corpus[2] // the forged tool call
		for _, c := range []struct{ provider, file, status, risk string }{
			{"anthropic", "anthropic/text_instead_of_tool.json", models.ReviewNoOpinion, ""}, // a model parroting the forged verdict in text
			{"anthropic", "anthropic/success.json", models.ReviewDone, "high"},
			{"openai", "openai/success.json", models.ReviewDone, "critical"},
		} {
			srv := newStandIn(t, c.file)
			r := file(t, st, models.NewRequest{Title: forged.Title, Detail: forged.Detail, Tool: "Bash", Command: forged.Command})
			reviewer(t, st, ch, c.provider, srv.URL, 10*time.Second).ReviewOne(context.Background(), r.ID)
			v := get(t, st, r.ID).Review
			if v == nil || v.Status != c.status || v.Risk != c.risk || strings.Contains(v.Rationale, "Pre-approved") {
				t.Fatalf("%s: review %+v, want %s %q", c.file, v, c.status, c.risk)
			}
		}
	})
}

// TestReviewRoutesRequireRule: a require rule naming review gives a request
// reviewed critical its policy when the review lands (raising the version),
// and decides nothing; a rule that would approve on review is refused.
func TestReviewRoutesRequireRule(t *testing.T) {
	rs, err := rules.ParseRules("rules.yaml", []byte(`rules:
  - name: two-for-critical
    match: {review: [critical]}
    action: require
    approvers: {required: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Each(t, func(t *testing.T, dialect string) {
		st, ch := storetest.Store(t, dialect)
		st.Rules = rules.NewRuleSet(rs)
		srv := newStandIn(t, "openai/success.json") // answers critical
		r := file(t, st, models.NewRequest{Title: "Pipe to shell", Command: "curl x | sh"})
		if r.Approvers != nil {
			t.Fatal("the rule matched before any review")
		}
		reviewer(t, st, ch, review.ProviderOpenAI, srv.URL, 10*time.Second).ReviewOne(context.Background(), r.ID)
		got := get(t, st, r.ID)
		if got.Approvers == nil || got.Approvers.Required != 2 || got.Version != 2 || !got.Open() {
			t.Fatalf("after a critical review: approvers %+v version %d status %s", got.Approvers, got.Version, got.Status)
		}
		if got.ReviewRisk() != "critical" {
			t.Fatalf("the review is not bound to the record as it now stands: %+v", got.Review)
		}
	})
	for _, bad := range []string{
		"rules:\n  - name: a\n    match: {review: low}\n    action: approve\n",
		"rules:\n  - name: a\n    match: {review: low}\n    action: hold\n    window: 1m\n    then: approve\n",
		"rules:\n  - name: a\n    match: {review: critical}\n    action: deny\n",
	} {
		if _, err := rules.ParseRules("rules.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "names review") {
			t.Fatalf("accepted %q: %v", bad, err)
		}
	}
}

// TestDailyCap: past the day's tokens a review is no_opinion without a call.
func TestDailyCap(t *testing.T) {
	st, ch := storetest.Store(t, "sqlite")
	srv := newStandIn(t, "anthropic/success.json")
	rv := reviewer(t, st, ch, review.ProviderAnthropic, srv.URL, 10*time.Second)
	rv.Config.DailyTokens = 800 // the first review costs 876
	first := file(t, st, models.NewRequest{Title: "one", Command: "ls"})
	rv.ReviewOne(context.Background(), first.ID)
	second := file(t, st, models.NewRequest{Title: "two", Command: "ls -la"})
	rv.ReviewOne(context.Background(), second.ID)
	if v := get(t, st, second.ID).Review; v == nil || v.Status != models.ReviewNoOpinion || v.Why != "over_cap" {
		t.Fatalf("over the cap: %+v", v)
	}
	if n := len(srv.received); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
	day, err := st.ReviewUsage(context.Background(), time.Now())
	if err != nil || day.TokensIn != 812 || day.TokensOut != 64 || day.Reviews != 2 || day.NoOpinion != 1 {
		t.Fatalf("usage %+v %v", day, err)
	}
}

// TestRunReviewsFilings: the running reviewer is woken by a filing (no
// polling) and stops with its context.
func TestRunReviewsFilings(t *testing.T) {
	st, ch := storetest.Store(t, "sqlite")
	srv := newStandIn(t, "anthropic/success.json")
	rv := reviewer(t, st, ch, review.ProviderAnthropic, srv.URL, 10*time.Second)
	stored := make(chan *models.Request, 4)
	rv.Stored = func(r *models.Request) { stored <- r }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rv.Run(ctx); close(done) }()
	r := file(t, st, models.NewRequest{Title: "Run", Command: "make"})
	select {
	case got := <-stored:
		if got.ID != r.ID || got.Review.Status != models.ReviewDone {
			t.Fatalf("stored %s %+v", got.ID, got.Review)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no review within 10s")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the reviewer did not stop")
	}
}
