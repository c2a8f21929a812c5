//go:build !agent

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestReviewerEval: `gatehouse reviewer eval` runs the configured model over
// the corpus and prints precision and recall per level, with the key read
// from the environment and never printed.
func TestReviewerEval(t *testing.T) {
	rec, err := os.ReadFile("../../review/testdata/openai/success.json")
	if err != nil {
		t.Fatal(err)
	}
	body := rec[strings.Index(string(rec), `"body":`)+len(`"body":`) : strings.LastIndex(string(rec), "}")]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	const secret = "sk-do-not-print-0000"
	t.Setenv("GATEHOUSE_REVIEWER_API_KEY", secret)
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"reviewer", "eval", "--corpus", "../../docs/reviewer-corpus.jsonl",
		"--reviewer", "openai:test-model", "--reviewer-base-url", srv.URL + "/v1"}, nil, &out, &errs)
	if code != 0 || !strings.Contains(out.String(), "precision") || !strings.Contains(out.String(), "critical") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errs.String())
	}
	var help bytes.Buffer
	run(context.Background(), []string{"reviewer", "eval", "-h"}, nil, &help, &help)
	run(context.Background(), []string{"serve", "-h"}, nil, &help, &help)
	if strings.Contains(out.String()+errs.String()+help.String(), secret) {
		t.Fatal("the reviewer's key was printed")
	}
	if !strings.Contains(help.String(), "$GATEHOUSE_REVIEWER_API_KEY") {
		t.Fatalf("the key's default is not shown as its variable:\n%s", help.String())
	}
	t.Run("a bad reviewer stops serve naming it", func(t *testing.T) {
		var o, e bytes.Buffer
		if _, err := parseServe([]string{"--reviewer", "gemini:x"}, &o, &e); err == nil || !strings.Contains(e.String(), "GATEHOUSE_REVIEWER") {
			t.Fatalf("err %v, stderr %s", err, e.String())
		}
	})
}
