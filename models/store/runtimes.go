package store

import (
	"context"
	"errors"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// RegisterRuntime creates the runtime p names, or updates the one it registered
// under the same name before (machine, callback). Either way it counts as seen.
func (s *Store) RegisterRuntime(ctx context.Context, p models.Principal, in models.RuntimeInput) (*models.Runtime, bool, error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	now := s.now()
	db := s.DB.WithContext(ctx)
	for range 2 {
		var rt models.Runtime
		err := db.Where("owner_id = ? AND name = ?", p.ID, in.Name).Take(&rt).Error
		switch {
		case err == nil:
			upd := map[string]any{"machine": in.Machine, "callback_url": in.CallbackURL, "updated_at": now, "last_seen_at": now}
			if err := db.Model(&models.Runtime{}).Where("id = ?", rt.ID).Updates(upd).Error; err != nil {
				return nil, false, err
			}
			rt.Machine, rt.CallbackURL, rt.UpdatedAt, rt.LastSeenAt = in.Machine, in.CallbackURL, now, now
			return &rt, false, nil
		case !notFound(err):
			return nil, false, err
		}
		rt = models.Runtime{ID: models.NewID("rt_"), OwnerID: p.ID, Name: in.Name, Machine: in.Machine, CallbackURL: in.CallbackURL,
			CreatedAt: now, UpdatedAt: now, LastSeenAt: now}
		err = db.Create(&rt).Error
		if err == nil {
			return &rt, true, nil
		}
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, false, err
		}
		// A concurrent registration of the same name won: update that one.
	}
	return nil, false, models.Errorf(models.ECodeConflict, "runtime %q is being registered concurrently; try again", in.Name)
}

// GetRuntime returns one runtime; ECodeNotFound when there is none.
func (s *Store) GetRuntime(ctx context.Context, id string) (*models.Runtime, error) {
	var rt models.Runtime
	err := s.DB.WithContext(ctx).Where("id = ?", id).Take(&rt).Error
	if notFound(err) {
		return nil, models.Errorf(models.ECodeNotFound, "no runtime %s", id)
	}
	if err != nil {
		return nil, err
	}
	return &rt, nil
}

// ListRuntimes returns the runtimes of one owner, or all when ownerID is "",
// by name.
func (s *Store) ListRuntimes(ctx context.Context, ownerID string) ([]models.RuntimeStatus, error) {
	db := s.DB.WithContext(ctx)
	q := db.Model(&models.Runtime{})
	if ownerID != "" {
		q = q.Where("owner_id = ?", ownerID)
	}
	var rts []models.Runtime
	if err := q.Order("name, id").Find(&rts).Error; err != nil {
		return nil, err
	}
	out := make([]models.RuntimeStatus, len(rts))
	if len(rts) == 0 {
		return out, nil
	}
	ids := make([]string, len(rts))
	for i, rt := range rts {
		ids[i] = rt.ID
	}
	var counts []struct {
		RuntimeID string
		N         int64
	}
	err := db.Model(&Forward{}).Select("runtime_id, count(*) AS n").
		Where("runtime_id IN ? AND state = ?", ids, models.ActuationPending).Group("runtime_id").Scan(&counts).Error
	if err != nil {
		return nil, err
	}
	pending := map[string]int64{}
	for _, c := range counts {
		pending[c.RuntimeID] = c.N
	}
	for i, rt := range rts {
		out[i] = models.RuntimeStatus{Runtime: rt, Pending: pending[rt.ID]}
	}
	return out, nil
}

// TouchRuntime records that a runtime called in (its pull feed).
func (s *Store) TouchRuntime(ctx context.Context, id string) error {
	return s.DB.WithContext(ctx).Model(&models.Runtime{}).Where("id = ?", id).Update("last_seen_at", s.now()).Error
}

// checkRuntime ensures a request names a runtime its filer registered, so a
// filer cannot route decisions to someone else's machine.
func checkRuntime(db *gorm.DB, p models.Principal, id *string) error {
	if id == nil {
		return nil
	}
	var n int64
	if err := db.Model(&models.Runtime{}).Where("id = ? AND owner_id = ?", *id, p.ID).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return models.Errorf(models.ECodeInvalid, "runtime_id %q is not a runtime you registered (POST /v1/runtimes first)", *id)
	}
	return nil
}
