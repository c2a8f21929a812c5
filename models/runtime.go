package models

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Runtime is a registered machine-local runtime: the process that holds an
// agent's live callback and acts on decisions. OwnerID is the runtime token that
// registered it; (OwnerID, Name) is unique, so re-registering updates it.
type Runtime struct {
	ID          string `gorm:"primaryKey;size:40"`
	OwnerID     string `gorm:"size:40;not null;uniqueIndex:idx_runtimes_owner_name,priority:1"`
	Name        string `gorm:"size:100;not null;uniqueIndex:idx_runtimes_owner_name,priority:2"`
	Machine     string `gorm:"size:200;not null"`
	CallbackURL string `gorm:"size:2000;not null;default:''"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
	LastSeenAt  time.Time
	// Seq numbers this runtime's decisions for its pull feed. It is raised under
	// the row lock inside each decision's transaction, so sequence order is commit
	// order and a reader that resumes after N never misses a smaller number.
	Seq int64 `gorm:"not null;default:0"`
	// Forwarding health: the last send's outcome and how many failed in a row.
	LastResult   string `gorm:"size:200;not null;default:''"`
	LastResultAt *time.Time
	Failures     int `gorm:"not null;default:0"`
}

// RuntimeInput is what a runtime registers.
type RuntimeInput struct {
	Name        string
	Machine     string
	CallbackURL string
}

// Validate checks a registration; it never touches the store.
func (in *RuntimeInput) Validate() error {
	in.Name, in.Machine, in.CallbackURL = strings.TrimSpace(in.Name), strings.TrimSpace(in.Machine), strings.TrimSpace(in.CallbackURL)
	if in.Name == "" || len(in.Name) > 100 {
		return Errorf(ECodeInvalid, "name is required: 1 to 100 bytes")
	}
	if in.Machine == "" || len(in.Machine) > 200 {
		return Errorf(ECodeInvalid, "machine is required: 1 to 200 bytes")
	}
	if in.CallbackURL == "" {
		return nil
	}
	u, err := url.Parse(in.CallbackURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(in.CallbackURL) > 2000 {
		return Errorf(ECodeInvalid, "callback_url must be an absolute http or https URL (the server POSTs {callback_url}/v1/permissions/decide)")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Errorf(ECodeInvalid, "callback_url may not carry a query or fragment")
	}
	in.CallbackURL = strings.TrimRight(in.CallbackURL, "/")
	return nil
}

// RegisterRuntime creates the runtime p names, or updates the one it registered
// under the same name before (machine, callback). Either way it counts as seen.
func (s *Store) RegisterRuntime(ctx context.Context, p Principal, in RuntimeInput) (*Runtime, bool, error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	now := s.now()
	db := s.DB.WithContext(ctx)
	for range 2 {
		var rt Runtime
		err := db.Where("owner_id = ? AND name = ?", p.ID, in.Name).Take(&rt).Error
		switch {
		case err == nil:
			upd := map[string]any{"machine": in.Machine, "callback_url": in.CallbackURL, "updated_at": now, "last_seen_at": now}
			if err := db.Model(&Runtime{}).Where("id = ?", rt.ID).Updates(upd).Error; err != nil {
				return nil, false, err
			}
			rt.Machine, rt.CallbackURL, rt.UpdatedAt, rt.LastSeenAt = in.Machine, in.CallbackURL, now, now
			return &rt, false, nil
		case !notFound(err):
			return nil, false, err
		}
		rt = Runtime{ID: NewID("rt_"), OwnerID: p.ID, Name: in.Name, Machine: in.Machine, CallbackURL: in.CallbackURL,
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
	return nil, false, Errorf(ECodeConflict, "runtime %q is being registered concurrently; try again", in.Name)
}

// GetRuntime returns one runtime; ECodeNotFound when there is none.
func (s *Store) GetRuntime(ctx context.Context, id string) (*Runtime, error) {
	var rt Runtime
	err := s.DB.WithContext(ctx).Where("id = ?", id).Take(&rt).Error
	if notFound(err) {
		return nil, Errorf(ECodeNotFound, "no runtime %s", id)
	}
	if err != nil {
		return nil, err
	}
	return &rt, nil
}

// RuntimeStatus is a runtime with the number of its forwards still pending.
type RuntimeStatus struct {
	Runtime
	Pending int64
}

// ListRuntimes returns the runtimes of one owner, or all when ownerID is "",
// by name.
func (s *Store) ListRuntimes(ctx context.Context, ownerID string) ([]RuntimeStatus, error) {
	db := s.DB.WithContext(ctx)
	q := db.Model(&Runtime{})
	if ownerID != "" {
		q = q.Where("owner_id = ?", ownerID)
	}
	var rts []Runtime
	if err := q.Order("name, id").Find(&rts).Error; err != nil {
		return nil, err
	}
	out := make([]RuntimeStatus, len(rts))
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
		Where("runtime_id IN ? AND state = ?", ids, ActuationPending).Group("runtime_id").Scan(&counts).Error
	if err != nil {
		return nil, err
	}
	pending := map[string]int64{}
	for _, c := range counts {
		pending[c.RuntimeID] = c.N
	}
	for i, rt := range rts {
		out[i] = RuntimeStatus{Runtime: rt, Pending: pending[rt.ID]}
	}
	return out, nil
}

// TouchRuntime records that a runtime called in (its pull feed).
func (s *Store) TouchRuntime(ctx context.Context, id string) error {
	return s.DB.WithContext(ctx).Model(&Runtime{}).Where("id = ?", id).Update("last_seen_at", s.now()).Error
}

// checkRuntime ensures a request names a runtime its filer registered, so a
// filer cannot route decisions to someone else's machine.
func checkRuntime(db *gorm.DB, p Principal, id *string) error {
	if id == nil {
		return nil
	}
	var n int64
	if err := db.Model(&Runtime{}).Where("id = ? AND owner_id = ?", *id, p.ID).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return Errorf(ECodeInvalid, "runtime_id %q is not a runtime you registered (POST /v1/runtimes first)", *id)
	}
	return nil
}
