package review_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/review"
)

// TestEvalCorpus: the labelled corpus loads (each case with its source), and
// Evaluate scores a model's answers per level: a stand-in that calls every
// command critical has critical recall 1 and precision the share of critical
// labels, and no other level predicted.
func TestEvalCorpus(t *testing.T) {
	cases, err := review.LoadCorpus("../docs/reviewer-corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	labelled := map[string]int{}
	for _, c := range cases {
		labelled[c.Risk]++
		if c.Source == "" {
			t.Fatalf("%q has no source", c.Command)
		}
	}
	for _, l := range review.Levels {
		if labelled[l] == 0 {
			t.Fatalf("the corpus has no %s case", l)
		}
	}
	srv := newStandIn(t, "openai/success.json") // answers critical
	p, err := review.NewProvider(review.Config{Spec: "openai:test-model", BaseURL: srv.URL + "/v1", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	s := review.Evaluate(context.Background(), p, cases, 10*time.Second)
	if s.Answered != len(cases) || s.Predicted["critical"] != len(cases) || s.Hit["critical"] != labelled["critical"] || s.Hit["low"] != 0 {
		t.Fatalf("score %+v", s)
	}
	if s.TokensIn != int64(798*len(cases)) {
		t.Fatalf("tokens in %d", s.TokensIn)
	}
	var out bytes.Buffer
	s.Print(&out, p.Model())
	want := "critical  " // the critical row: recall 1.00
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, want) {
			line = l
		}
	}
	if !strings.HasSuffix(line, "1.00") || !strings.Contains(out.String(), "precision") {
		t.Fatalf("printed:\n%s", out.String())
	}
}
