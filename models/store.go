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
	// Read serves reads that need not see the caller's open transaction
	// (authentication, GetRequest, lists); on SQLite a pool of query_only
	// connections beside the one writer, so reads never queue behind writes.
	// nil: DB.
	Read *gorm.DB

	batch *groupCommit // SQLite: concurrent transactions share one COMMIT
	auth  *authCache   // nil: every call reads its token or session
}

// NewStore returns a store over db that announces through a.
func NewStore(db *gorm.DB, a Announcer) *Store {
	var batch *groupCommit
	if db.Dialector.Name() == "sqlite" {
		batch = &groupCommit{db: db}
	}
	s := &Store{
		batch:         batch,
		DB:            db,
		Announcer:     a,
		Now:           func() time.Time { return time.Now().UTC() },
		DefaultExpiry: time.Hour,
		MaxExpiry:     7 * 24 * time.Hour,
	}
	if batch != nil { // SQLite: the cache checks the file's revocation epoch at each use
		s.auth = newAuthCache(sqliteEpoch(s.reader))
	}
	return s
}

// reader is where a read that needs no open transaction goes: the reader
// pool when there is one.
func (s *Store) reader(ctx context.Context) *gorm.DB {
	if s.Read != nil {
		return s.Read.WithContext(ctx)
	}
	return s.DB.WithContext(ctx)
}

// now is truncated to microseconds, the precision PostgreSQL keeps, so a record
// reads back as it was written on either database.
func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// transact runs fn in one transaction on db and, when it commits, announces
// the change that change names (none when it returns a nil request). A
// TxAnnouncer announces inside the transaction — PostgreSQL then delivers the
// NOTIFY with the commit itself, so a commit is never left unannounced (a crash
// between the two, a failed NOTIFY after it) and a failed NOTIFY fails the
// commit. Any other announcer is called right after the commit.
//
// On SQLite fn joins a group commit: it runs in its own savepoint of a
// transaction shared with the writers queued beside it, and transact returns
// once that transaction's COMMIT (one fsync for all) has. PostgreSQL groups
// concurrent commits itself, so there each call has its own transaction.
func (s *Store) transact(db *gorm.DB, fn func(tx *gorm.DB) error, change func() (*Request, string)) error {
	txa, inTx := s.Announcer.(TxAnnouncer)
	announceTx := func(tx *gorm.DB) error {
		if r, action := change(); inTx && r != nil {
			return txa.AnnounceTx(tx, changeOf(r, action))
		}
		return nil
	}
	var err error
	if s.batch != nil {
		err = s.batch.do(db.Statement.Context, fn, announceTx)
	} else {
		err = db.Transaction(func(tx *gorm.DB) error {
			if err := fn(tx); err != nil {
				return err
			}
			return announceTx(tx)
		})
	}
	if err == nil && !inTx && s.Announcer != nil {
		if r, action := change(); r != nil {
			s.Announcer.Announce(changeOf(r, action))
		}
	}
	return err
}

func changeOf(r *Request, action string) Change {
	ch := Change{RequestID: r.ID, Version: r.Version, Status: r.Status, Action: action}
	if r.RuntimeID != nil {
		ch.RuntimeID = *r.RuntimeID
	}
	return ch
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
	err := s.reader(ctx).Where("request_id = ?", requestID).Order("id").Find(&rows).Error
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
