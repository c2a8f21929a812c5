//go:build !agent

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/review"
)

// reviewerFlags defines the advisory reviewer's settings, shared by serve and
// reviewer eval; the key is a secret flag, so no help or default shows it.
func reviewerFlags(fs *flagSet, envs *envReader, c *review.Config) *string {
	fs.StringVar(&c.Spec, "reviewer", env("GATEHOUSE_REVIEWER", ""), "advisory reviewer, anthropic:MODEL or openai:MODEL; off when empty (GATEHOUSE_REVIEWER)")
	fs.StringVar(&c.BaseURL, "reviewer-base-url", env("GATEHOUSE_REVIEWER_BASE_URL", ""),
		"the reviewer's API address, e.g. an OpenAI-compatible local server (GATEHOUSE_REVIEWER_BASE_URL)")
	key := fs.secret("reviewer-api-key", "GATEHOUSE_REVIEWER_API_KEY", "the reviewer's API key; empty reads ANTHROPIC_API_KEY or OPENAI_API_KEY")
	fs.DurationVar(&c.Timeout, "reviewer-timeout", envs.Duration("GATEHOUSE_REVIEWER_TIMEOUT", review.DefaultTimeout),
		"one review's limit; past it the review is no_opinion (GATEHOUSE_REVIEWER_TIMEOUT)")
	fs.Func("reviewer-daily-tokens", "input plus output tokens the reviewer may spend per UTC day; 0: no cap (GATEHOUSE_REVIEWER_DAILY_TOKENS)", func(v string) error {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil || n < 0 {
			return fmt.Errorf("%q is not a whole number of tokens", v)
		}
		c.DailyTokens = int64(n)
		return nil
	})
	c.DailyTokens = int64(envs.Int("GATEHOUSE_REVIEWER_DAILY_TOKENS", 0))
	return key
}

// checkReviewer names a reviewer setting that cannot work.
func checkReviewer(fs *flag.FlagSet, c review.Config) error {
	if c.Spec != "" {
		if _, _, err := review.ParseSpec(c.Spec); err != nil {
			return fmt.Errorf("--reviewer (GATEHOUSE_REVIEWER): %w", err)
		}
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("--reviewer-timeout (GATEHOUSE_REVIEWER_TIMEOUT) must be positive")
	}
	if c.DailyTokens < 0 {
		return fmt.Errorf("--reviewer-daily-tokens (GATEHOUSE_REVIEWER_DAILY_TOKENS) must not be negative")
	}
	return nil
}

// runReviewerEval runs the configured model over a labelled corpus and
// prints precision and recall per risk level.
func runReviewerEval(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("reviewer eval", stdout, stderr)
	var c review.Config
	var envs envReader
	key := reviewerFlags(fs, &envs, &c)
	corpus := fs.String("corpus", "", "the labelled corpus, JSON Lines (e.g. docs/reviewer-corpus.jsonl)")
	if err := fs.parse(args); err != nil { // -h first, whatever the environment holds
		return exitCode(err, 2)
	}
	if err := envs.Err(); err != nil {
		return fs.usageError(2, "%v", err)
	}
	c.APIKey = *key
	if *corpus == "" {
		return fs.usageError(2, "--corpus FILE is required")
	}
	if c.Spec == "" {
		return fs.usageError(2, "no reviewer: give --reviewer anthropic:MODEL or openai:MODEL (or GATEHOUSE_REVIEWER)")
	}
	if err := checkReviewer(fs.FlagSet, c); err != nil {
		return fs.usageError(2, "%v", err)
	}
	cases, err := review.LoadCorpus(*corpus)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse reviewer eval:", err)
		return 1
	}
	p, err := review.NewProvider(c)
	if err != nil {
		return fs.usageError(2, "%v", err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	review.Evaluate(ctx, p, cases, timeout).Print(stdout, p.Model())
	return 0
}
