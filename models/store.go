package models

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Store is the record of requests, tokens and the audit trail. Every method that
// changes a request commits first and then announces the change.
type Store struct {
	DB        *gorm.DB
	Announcer Announcer
	// Now is the clock; tests fix it.
	Now func() time.Time
	// DefaultExpiry applies when a filer asks for none; MaxExpiry caps what a
	// filer may ask for.
	DefaultExpiry time.Duration
	MaxExpiry     time.Duration
	// Rules judge each new request before a person sees it; nil: none.
	Rules *RuleSet
}

// NewStore returns a store over db that announces through a.
func NewStore(db *gorm.DB, a Announcer) *Store {
	return &Store{
		DB:            db,
		Announcer:     a,
		Now:           func() time.Time { return time.Now().UTC() },
		DefaultExpiry: time.Hour,
		MaxExpiry:     7 * 24 * time.Hour,
	}
}

// now is truncated to microseconds, the precision PostgreSQL keeps, so a record
// reads back as it was written on either database.
func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

func (s *Store) announce(r *Request, action string) {
	if s.Announcer != nil {
		ch := Change{RequestID: r.ID, Version: r.Version, Status: r.Status, Action: action}
		if r.RuntimeID != nil {
			ch.RuntimeID = *r.RuntimeID
		}
		s.Announcer.Announce(ch)
	}
}

// audit appends one row to the trail inside tx.
func (s *Store) audit(tx *gorm.DB, r *Request, action, actor, via string, detail map[string]any) error {
	d := ""
	if len(detail) > 0 {
		b, err := json.Marshal(detail)
		if err != nil {
			return err
		}
		d = string(b)
	}
	return tx.Create(&Audit{RequestID: r.ID, Version: r.Version, Action: action, Actor: actor, Via: via, Detail: d, CreatedAt: s.now()}).Error
}

// AppendAudit records an event that changes no record (a forward attempt, a push).
func (s *Store) AppendAudit(ctx context.Context, requestID string, version int, action, actor, via string, detail map[string]any) error {
	r := &Request{ID: requestID, Version: version}
	return s.audit(s.DB.WithContext(ctx), r, action, actor, via, detail)
}

// AuditTrail returns the trail of one request, oldest first.
func (s *Store) AuditTrail(ctx context.Context, requestID string) ([]Audit, error) {
	var rows []Audit
	err := s.DB.WithContext(ctx).Where("request_id = ?", requestID).Order("id").Find(&rows).Error
	return rows, err
}

func notFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }

// load reads one request by id; a missing one is ECodeNotFound.
func load(tx *gorm.DB, id string) (*Request, error) {
	var r Request
	if err := tx.Where("id = ?", id).Take(&r).Error; err != nil {
		if notFound(err) {
			return nil, Errorf(ECodeNotFound, "no request %s", id)
		}
		return nil, err
	}
	return &r, nil
}
