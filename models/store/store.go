package store

import (
	"context"
	"errors"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
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
	Rules *rules.RuleSet
	// SuggestAfter is how many operator allows of one command family in one
	// project propose a remembered allow (ListSuggestions); ReviewTouched says
	// whether the reviewer judged a request high or critical, which keeps its
	// family from ever being proposed (nil: none did).
	SuggestAfter  int
	ReviewTouched func(*models.Request) bool
	// Read serves reads that need not see the caller's open transaction
	// (authentication, GetRequest, lists); on SQLite a pool of query_only
	// connections beside the one writer, so reads never queue behind writes.
	// nil: DB.
	Read *gorm.DB

	batch *groupCommit // SQLite: concurrent transactions share one COMMIT
	// decideRead, for tests, runs between a decision's read and its write.
	decideRead func(r *models.Request)
	auth       *authCache // nil: every call reads its token or session
	// revokes (SQLite) is the revocation counter every revoker raises after
	// its commit (revoke_signal.go); revokesErr says why there is none.
	revokes    *revokeSignal
	revokesErr error
	open       *openCache // the open records this store committed last

	// rememberedRead, for tests, runs between a filing's read of the grant
	// that covers it and the filing's transaction.
	rememberedRead func(grantID string)
	// loginRead, for tests, runs between a login's check of its token and
	// the transaction that opens the session.
	loginRead func()
}

// NewStore returns a store over db that announces through a.
func NewStore(db *gorm.DB, a Announcer) *Store {
	sqlite := db.Dialector.Name() == "sqlite"
	batch := &groupCommit{db: db, headFirst: !sqlite}
	if sqlite {
		batch.stmts = newStmtCache()
		batch.checkpointEvery = checkpointEvery
	}
	s := &Store{
		batch:         batch,
		DB:            db,
		Announcer:     a,
		Now:           func() time.Time { return time.Now().UTC() },
		DefaultExpiry: time.Hour,
		MaxExpiry:     7 * 24 * time.Hour,
		SuggestAfter:  models.DefaultSuggestAfter,
		ReviewTouched: models.ReviewedHigh,
		open:          newOpenCache(),
	}
	if sqlite { // the cache checks the revocation counter at each use
		if sig, err := sqliteRevokes(db); err == nil {
			s.revokes = sig
			s.auth = newAuthCache(func(context.Context) (int64, error) { return sig.load(), nil })
		} else {
			// The file's epoch, read at each use; a revocation made here would
			// not reach a server that maps the counter, so none is made.
			s.revokesErr = err
			// The pool itself, not reader's per-call session: only its *sql.DB is used.
			s.auth = newAuthCache(sqliteEpoch(s.readPool))
		}
	}
	return s
}

// reader is where a read that needs no open transaction goes: the reader
// pool when there is one.
func (s *Store) reader(ctx context.Context) *gorm.DB { return s.readPool().WithContext(ctx) }

// readPool is the pool reader's sessions are made on.
func (s *Store) readPool() *gorm.DB {
	if s.Read != nil {
		return s.Read
	}
	return s.DB
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
// fn joins a group commit: it runs in its own savepoint of a transaction
// shared with the writers queued beside it, and transact returns once that
// transaction's COMMIT (one fsync, or one WAL flush, for all) has.
func (s *Store) transact(db *gorm.DB, fn func(tx *gorm.DB) error, change func() (*models.Request, string)) error {
	return s.transactAll(db, fn, func() []models.Change {
		if r, action := change(); r != nil {
			return []models.Change{changeOf(r, action)}
		}
		return nil
	})
}

// transactAll is transact for a transaction that makes several changes (a
// filing a rule decides in the same commit): they are announced in order.
func (s *Store) transactAll(db *gorm.DB, fn func(tx *gorm.DB) error, changes func() []models.Change) error {
	txa, inTx := s.Announcer.(TxAnnouncer)
	prep, _ := s.Announcer.(Preparer)
	var chs []models.Change // as committed: made once, inside the transaction
	made := false
	announceTx := func(tx *gorm.DB) error {
		if !inTx && prep == nil {
			return nil
		}
		chs, made = changes(), true
		if !inTx {
			for i := range chs {
				chs[i] = chs[i].Shared() // what Prepare starts, Announce finds
				prep.Prepare(chs[i])
			}
			return nil
		}
		for _, ch := range chs {
			if err := txa.AnnounceTx(tx, ch); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.batch.do(db.Statement.Context, fn, announceTx); err != nil {
		return err
	}
	if !inTx {
		if !made {
			chs = changes()
		}
		if s.Announcer != nil {
			for _, ch := range chs {
				s.Announcer.Announce(ch)
			}
		}
	}
	s.open.committed(chs)
	return nil
}

// changeOf is the announcement of r as committed; it carries a copy of r, so
// the caller may go on using its own.
func changeOf(r *models.Request, action string) models.Change {
	rec := *r
	ch := models.Change{RequestID: r.ID, Version: r.Version, Status: r.Status, Action: action, Record: &rec}
	if r.RuntimeID != nil {
		ch.RuntimeID = *r.RuntimeID
	}
	return ch
}

func notFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }

// load reads one request by id; a missing one is ECodeNotFound.
func load(tx *gorm.DB, id string) (*models.Request, error) {
	r, err := loadRequest(tx, id)
	if err != nil {
		if notFound(err) {
			return nil, models.Errorf(models.ECodeNotFound, "no request %s", id)
		}
		return nil, err
	}
	return r, nil
}
