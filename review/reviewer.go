package review

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// Reviewer asks the model about each request left to a person and stores
// its answer on the record. It is a subscriber of the change bus: woken by
// each filing and edit, never by polling; at most Config.Concurrency calls run
// at once; Run returns, with every call ended, when its context ends.
type Reviewer struct {
	Store    *store.Store
	Changes  *store.Changes
	Provider Provider
	Config   Config
	// Stored, if set, is told of each review stored (tests).
	Stored func(r *models.Request)

	wg sync.WaitGroup
}

// New builds the reviewer c configures, or nil when c configures none.
func New(c Config, st *store.Store, ch *store.Changes) (*Reviewer, error) {
	if !c.Enabled() {
		return nil, nil
	}
	p, err := NewProvider(c)
	if err != nil {
		return nil, err
	}
	return &Reviewer{Store: st, Changes: ch, Provider: p, Config: c}, nil
}

// staleClaim is how old a pending review must be before another try may take
// it over (its process stopped mid-call).
func (rv *Reviewer) staleClaim() time.Duration { return 2*rv.Config.timeout() + 10*time.Second }

// Run reviews until ctx ends: the open requests first (a filing made while
// no reviewer ran is still reviewed), then each filing and edit announced.
func (rv *Reviewer) Run(ctx context.Context) {
	n := rv.Config.Concurrency
	if n <= 0 {
		n = 4
	}
	slots := make(chan struct{}, n)
	defer rv.wg.Wait()
	sub := rv.Changes.Subscribe(256)
	defer func() { sub.Close() }()
	rv.reviewOpen(ctx, slots)
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-sub.C:
			switch {
			case !ok: // dropped for lagging: resubscribe and look again
				sub = rv.Changes.Subscribe(256)
				rv.reviewOpen(ctx, slots)
			case ch.Action == models.ActionResync:
				rv.reviewOpen(ctx, slots)
			case ch.Action == "create" || ch.Action == "edit":
				if ch.Record == nil || needsReview(ch.Record) {
					rv.start(ctx, slots, ch.RequestID)
				}
			}
		}
	}
}

// needsReview is a cheap look at an announced record before a claim is tried.
func needsReview(r *models.Request) bool {
	return store.Reviewable(r) && (r.Review == nil || !r.Review.Current(r) || r.Review.Status == models.ReviewPending)
}

func (rv *Reviewer) reviewOpen(ctx context.Context, slots chan struct{}) {
	ids, err := rv.Store.OpenRequestIDs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			slog.Error("reviewer: open requests", "err", err)
		}
		return
	}
	for _, id := range ids {
		rv.start(ctx, slots, id)
	}
}

// start runs one review when a slot is free; it waits for one (the bus's
// buffer absorbs the wait), so no review is dropped for being busy.
func (rv *Reviewer) start(ctx context.Context, slots chan struct{}, id string) {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	rv.wg.Go(func() {
		defer func() { <-slots }()
		rv.ReviewOne(ctx, id)
	})
}

// ReviewOne claims, asks and stores the review of one request; a request
// with nothing to ask (not reviewable, reviewed already, claimed elsewhere)
// is left as it is.
func (rv *Reviewer) ReviewOne(ctx context.Context, id string) {
	r, claimed, err := rv.Store.ClaimReview(ctx, id, rv.Provider.Model(), rv.staleClaim())
	if err != nil || !claimed {
		if err != nil && ctx.Err() == nil {
			slog.Error("reviewer: claim", "request", id, "err", err)
		}
		return
	}
	v := rv.ask(ctx, r)
	if ctx.Err() != nil {
		return // stopping: the claim lapses and the next start asks again
	}
	stored, err := rv.Store.FinishReview(ctx, r, v)
	if err != nil {
		slog.Error("reviewer: store", "request", id, "err", err)
		return
	}
	if stored != nil {
		slog.Info("reviewed", "request", id, "status", v.Status, "risk", v.Risk, "why", v.Why, "tokens_in", v.TokensIn, "tokens_out", v.TokensOut)
		if rv.Stored != nil {
			rv.Stored(stored)
		}
	}
}

// ask makes the one call of a review, within the daily cap and the timeout.
func (rv *Reviewer) ask(ctx context.Context, r *models.Request) models.Review {
	v := models.Review{Status: models.ReviewNoOpinion, Model: rv.Provider.Model(), Digest: r.Review.Digest}
	if cap := rv.Config.DailyTokens; cap > 0 {
		day, err := rv.Store.ReviewUsage(ctx, rv.Store.Now())
		if err != nil {
			v.Why = "error"
			return v
		}
		if day.TokensIn+day.TokensOut >= cap {
			v.Why = "over_cap"
			return v
		}
	}
	prompts, err := rv.Store.SessionPrompts(ctx, r.OwnerID, r.SourceRef["session"])
	if err != nil {
		v.Why = "error"
		return v
	}
	cctx, cancel := context.WithTimeout(ctx, rv.Config.timeout())
	defer cancel()
	a, u, err := rv.Provider.Ask(cctx, BuildPrompt(r, prompts))
	v.TokensIn, v.TokensOut = u.In, u.Out
	switch {
	case err == nil:
		v.Status, v.Risk, v.Authorised, v.Rationale = models.ReviewDone, a.Risk, a.Authorised, a.Rationale
	case errors.Is(err, ErrRefused):
		v.Why = "refusal"
	case errors.Is(err, ErrMalformed):
		v.Why = "malformed"
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		v.Why = "timeout"
	default:
		v.Why = "error"
		if ctx.Err() == nil {
			slog.Warn("reviewer: the model's API failed", "request", r.ID, "model", v.Model, "err", describe(err))
		}
	}
	return v
}
