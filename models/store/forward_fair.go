package store

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// ClaimFairForwards claims up to limit due forwards in a fair order, so one
// runtime's backlog never delays another's: each runtime's oldest due row
// first, round-robin across runtimes, then each one's second, and so on; and no
// runtime goes past perRuntime sends in flight, counting busy (this process's
// sends still open, by runtime id). Like ClaimForwards, each claim is a
// conditional UPDATE.
func (s *Store) ClaimFairForwards(ctx context.Context, owner string, limit int, lease time.Duration, perRuntime int, busy map[string]int) ([]Forward, error) {
	if limit <= 0 || perRuntime <= 0 {
		return nil, nil
	}
	now := s.now()
	db := s.DB.WithContext(ctx)
	var full []string
	inFlight := 0
	for id, n := range busy {
		inFlight += n
		if n >= perRuntime {
			full = append(full, id)
		}
	}
	ranked := withCallback(db).
		Select("forwards.*, ROW_NUMBER() OVER (PARTITION BY runtime_id ORDER BY next_attempt_at, id) AS fair_rank").
		Where("next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until < ?)", now, now)
	if len(full) > 0 {
		ranked = ranked.Where("runtime_id NOT IN ?", full)
	}
	// A runtime with sends open may have rows ranked within perRuntime that it
	// cannot take: at most one per open send, hence the extra inFlight.
	var due []Forward
	err := db.Table("(?) AS ranked", ranked).Where("fair_rank <= ?", perRuntime).
		Order("fair_rank, next_attempt_at, id").Limit(limit + inFlight).Find(&due).Error
	if err != nil {
		return nil, err
	}
	taken := map[string]int{}
	picked := due[:0]
	for _, f := range due {
		if len(picked) == limit {
			break
		}
		if busy[f.RuntimeID]+taken[f.RuntimeID] >= perRuntime {
			continue
		}
		taken[f.RuntimeID]++
		picked = append(picked, f)
	}
	return s.claimRows(ctx, owner, picked, now, lease)
}

// claimRows claims each row with a conditional UPDATE and returns those won.
func (s *Store) claimRows(ctx context.Context, owner string, due []Forward, now time.Time, lease time.Duration) ([]Forward, error) {
	db := s.DB.WithContext(ctx)
	until := now.Add(lease)
	out := due[:0]
	for _, f := range due {
		res := db.Model(&Forward{}).
			Where("id = ? AND state = ? AND (claimed_until IS NULL OR claimed_until < ?)", f.ID, models.ActuationPending, now).
			UpdateColumns(map[string]any{"claimed_by": owner, "claimed_until": until})
		if res.Error != nil {
			return out, res.Error
		}
		if res.RowsAffected == 1 {
			f.ClaimedBy, f.ClaimedUntil = owner, &until
			out = append(out, f)
		}
	}
	return out, nil
}
