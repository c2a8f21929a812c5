package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// Exit codes of ask, for scripts. Only an option whose effect is allow exits
// 0, so `if gatehouse ask …; then deploy; fi` never deploys on "Ask me
// tomorrow" or any other option that says neither yes nor no.
const (
	exitAllow   = 0
	exitDeny    = 1
	exitExpired = 2
	exitError   = 3
	exitOther   = 4 // an option without an effect: its id is on stdout
)

// optionFlags collects repeated --option id:label[:effect].
type optionFlags []api.Option

func (o *optionFlags) String() string { return fmt.Sprint(*o) }

func (o *optionFlags) Set(v string) error {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return errors.New("want id:label or id:label:effect")
	}
	opt := api.Option{ID: parts[0], Label: parts[1]}
	if len(parts) == 3 {
		opt.Effect = parts[2]
	}
	*o = append(*o, opt)
	return nil
}

// runAsk files a request, waits for the decision (re-issuing the long-poll as
// needed) and exits 0 for an option whose effect is allow, 1 for deny, 2 for
// expired or timed out, 3 for errors, 4 for any other option.
func runAsk(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("ask", stdout, stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "agent or runtime token")
	title := fs.String("title", "", "what the operator is asked (required)")
	summary := fs.String("summary", "", "a line of context")
	detailFile := fs.String("detail-file", "", "a file whose text is the request's detail")
	kind := fs.String("kind", "approval", "approval, question, permission, …")
	risk := fs.String("risk", "", "low, medium or high")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait; the request expires then too")
	asJSON := fs.Bool("json", false, "print the final record as JSON")
	var opts optionFlags
	fs.Var(&opts, "option", "an option id:label[:effect], effect allow or deny (repeatable; default allow/deny). Exit 0 allow, 1 deny, 2 expired or timed out, 3 error, 4 an option without an effect (its id printed)")
	if err := fs.parse(args); err != nil {
		return exitCode(err, exitError)
	}
	if *title == "" {
		fmt.Fprintln(stderr, "gatehouse ask: --title is required")
		return exitError
	}
	if len(opts) == 0 {
		opts = optionFlags{{ID: "allow", Label: "Allow", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
	}
	n := api.NewRequest{Kind: *kind, Title: *title, Summary: *summary, Risk: *risk, Options: opts, Source: "host",
		ExpiresIn: new(int64(max(*timeout/time.Second, 1)))}
	if *detailFile != "" {
		b, err := os.ReadFile(*detailFile)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse ask:", err)
			return exitError
		}
		n.Detail = string(b)
	}
	c, err := newClient(*url, *token)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse ask:", err)
		return exitError
	}
	r, err := c.File(ctx, n, "")
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse ask:", err)
		return exitError
	}
	fmt.Fprintf(stderr, "gatehouse ask: waiting for a decision on %s (%s)\n", r.ID, *title)
	waitCtx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	final, err := c.WaitSettled(waitCtx, r.ID)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			// Withdraw it, so the inbox shows no request nobody waits for.
			cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer ccancel()
			_, _ = c.Cancel(cctx, r.ID)
			fmt.Fprintln(stderr, "gatehouse ask: no decision in time")
			return exitExpired
		}
		fmt.Fprintln(stderr, "gatehouse ask:", err)
		return exitError
	}
	if final.Status == "resolved" && !final.DecidedOn(r.ActionDigest) {
		// Decided, but on another version than the one filed: not this filing's answer.
		fmt.Fprintf(stderr, "gatehouse ask: %s was decided on a version other than the one filed (decided_digest %s, filed %s); no decision\n", r.ID, deref(final.DecidedDigest), r.ActionDigest)
		return exitExpired
	}
	return reportDecision(final, *asJSON, stdout)
}

func deref(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}

func reportDecision(r *api.Request, asJSON bool, stdout io.Writer) int {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
	} else {
		switch {
		case r.Decision != nil:
			fmt.Fprintln(stdout, *r.Decision)
		case r.Answer != nil:
			fmt.Fprintln(stdout, *r.Answer)
		default:
			fmt.Fprintln(stdout, r.Status)
		}
	}
	if r.Status != "resolved" {
		return exitExpired
	}
	switch r.Effect() {
	case "allow":
		return exitAllow
	case "deny":
		return exitDeny
	}
	return exitOther
}
