package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"
)

// ErrNoDatabase is returned by OpenStore when create is false and the SQLite
// file does not exist yet.
var ErrNoDatabase = errors.New("no database")

// OpenStore opens and migrates the database a URL names and returns a store
// announcing through a (nil: announce nowhere, as the CLI's own writes need no
// waking) and the function that closes it. With create false a SQLite file
// that does not exist is refused rather than made: a command run with the
// wrong path must not make a second, empty database.
func OpenStore(database string, a store.Announcer, create bool) (*store.Store, func(), error) {
	if path, ok := store.SQLitePath(database); ok && !create {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w at %s: start `gatehouse serve` once, pass --database, or --create to make one here", ErrNoDatabase, path)
		}
	}
	db, err := store.OpenDB(database)
	if err != nil {
		return nil, nil, err
	}
	read, err := store.OpenReadDB(database)
	if err != nil {
		closeGorm(db)
		return nil, nil, err
	}
	closeDB := func() {
		closeGorm(db)
		closeGorm(read)
	}
	if err := store.MigrateLocked(db); err != nil {
		closeDB()
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	st := store.NewStore(db, a)
	st.Read = read
	return st, closeDB, nil
}

// closeGorm closes db's connections; a nil db is none.
func closeGorm(db *gorm.DB) {
	if db == nil {
		return
	}
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close()
	}
}

// PushSenders builds the push senders from the environment: APNs when
// GATEHOUSE_APNS_KEY_FILE is set (a bad APNs setting is an error, not a silent
// no-op), Web Push always, with the keys kept in the database.
func PushSenders(ctx context.Context, st *store.Store, baseURL string) (push.Senders, push.Config, func(), error) {
	acfg, cfg, err := push.EnvConfig(nil)
	if err != nil {
		return push.Senders{}, cfg, nil, err
	}
	cfg.BaseURL = baseURL
	keys, err := st.VAPIDKeys(ctx)
	if err != nil {
		return push.Senders{}, cfg, nil, fmt.Errorf("web push keys: %w", err)
	}
	s := push.Senders{WebPush: &push.WebPush{Keys: keys, Subject: push.VAPIDSubject(nil, baseURL)}}
	closeFn := func() {}
	if acfg.Enabled() {
		a, err := push.NewAPNs(acfg)
		if err != nil {
			return push.Senders{}, cfg, nil, err
		}
		s.APNs, closeFn = a, a.Close
	}
	return s, cfg, closeFn, nil
}

// countListens exports how often the listener (re)connected: a rising count
// means the replica keeps losing its LISTEN connection and resyncing.
func countListens(reg prometheus.Registerer, pg *store.PGAnnouncer) {
	if pg == nil {
		return
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gatehouse_change_listens_total",
		Help: "Times this replica's LISTEN connection was established (1 + reconnects); each one resyncs waiters and subscribers.",
	}, func() float64 { return float64(pg.Listens()) }))
}

// CheckPush reads the push settings from the environment and builds the APNs
// client they name (it does not connect), so a bad setting stops a start
// before anything is made.
func CheckPush() error {
	acfg, _, err := push.EnvConfig(nil)
	if err != nil || !acfg.Enabled() {
		return err
	}
	a, err := push.NewAPNs(acfg)
	if err != nil {
		return err
	}
	a.Close()
	return nil
}
