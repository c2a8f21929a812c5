package web

import (
	"context"

	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/views"
)

// ReviewUsageStore reads what the advisory reviewer spent, per UTC day.
type ReviewUsageStore interface {
	ReviewDays(ctx context.Context, n int) ([]store.ReviewDay, error)
}

// reviewDaysShown is how many days the System page lists.
const reviewDaysShown = 14

// reviewUsage is the System page's reviewer section: nil when the store keeps
// none or the reviewer never ran.
func (s *Server) reviewUsage(ctx context.Context) (*views.ReviewUsage, error) {
	rs, ok := s.store.(ReviewUsageStore)
	if !ok {
		return nil, nil
	}
	days, err := rs.ReviewDays(ctx, reviewDaysShown)
	if err != nil || len(days) == 0 {
		return nil, err
	}
	out := &views.ReviewUsage{}
	for _, d := range days {
		out.Days = append(out.Days, views.ReviewDayRow{Day: d.Day, Reviews: d.Reviews, NoOpinion: d.NoOpinion, TokensIn: d.TokensIn, TokensOut: d.TokensOut})
	}
	return out, nil
}
