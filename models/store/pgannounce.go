package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"
	"gorm.io/gorm"
)

// NotifyChannel is the PostgreSQL channel every replica announces on.
const NotifyChannel = "gatehouse_changes"

// ListenAppName starts the application_name of every listen connection; the
// rest is "host:pid".
const ListenAppName = "gatehouse-listen:"

// PGAnnouncer carries change announcements across replicas on one PostgreSQL
// database. AnnounceTx sends NOTIFY within the committing transaction; a dedicated LISTEN connection relays every
// notification — this process's own included — into Changes. So a change reaches
// the local fan-out exactly once, by the same path as everyone else's.
type PGAnnouncer struct {
	DB      *gorm.DB // sends Announce's NOTIFY through the pool
	Changes *Changes // where notifications land
	// Connect opens the listen connection; the announcer closes it.
	Connect func(ctx context.Context) (*pgx.Conn, error)
	// ReconnectDelay is the pause after the listen connection fails.
	ReconnectDelay time.Duration

	once      sync.Once
	listening chan struct{}
	listens   atomic.Int64
}

// NewPGAnnouncer returns an announcer that listens on its own connection to the
// database at url and notifies through db.
func NewPGAnnouncer(url string, db *gorm.DB, changes *Changes) *PGAnnouncer {
	return &PGAnnouncer{
		DB: db, Changes: changes, ReconnectDelay: time.Second,
		Connect: func(ctx context.Context) (*pgx.Conn, error) { return connectListener(ctx, url) },
	}
}

// connectListener opens a connection with short TCP keepalives: a listener on a
// silently dead network path would otherwise wait for notifications forever.
func connectListener(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{
		Timeout:         10 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 5 * time.Second, Count: 3},
	}
	cfg.DialFunc = d.DialContext
	// Named, so an operator can tell listeners apart in pg_stat_activity.
	host, _ := os.Hostname()
	cfg.RuntimeParams["application_name"] = fmt.Sprintf("%s%s:%d", ListenAppName, host, os.Getpid())
	return pgx.ConnectConfig(ctx, cfg)
}

// AnnounceTx queues the NOTIFY of ch in the committing transaction tx: PostgreSQL
// delivers it to every replica at COMMIT, and drops it on rollback. So a
// committed change is always announced everywhere — no crash between commit
// and NOTIFY, no NOTIFY that reached only this process — and a NOTIFY that
// cannot be queued fails the transaction, which then changes nothing. The
// store announces this way.
func (a *PGAnnouncer) AnnounceTx(tx *gorm.DB, ch models.Change) error {
	payload, err := notifyPayload(ch)
	if err != nil {
		return err
	}
	if bt, ok := tx.Statement.ConnPool.(*batchTx); ok {
		bt.notify(payload) // sent with the batch's others before its COMMIT
		return nil
	}
	return tx.Exec("SELECT pg_notify(?, ?)", NotifyChannel, payload).Error
}

// MaxNotifyPayload is the most a NOTIFY payload may hold: PostgreSQL refuses
// 8000 bytes or more.
const MaxNotifyPayload = 7999

// notifyPayload encodes ch with its record when that fits a NOTIFY, so other
// replicas' waiters answer without a read; a bigger record (a long detail) is
// left out and receivers read it.
func notifyPayload(ch models.Change) (string, error) {
	payload, err := json.Marshal(ch)
	if err != nil {
		return "", err
	}
	if len(payload) > MaxNotifyPayload {
		ch.Record = nil
		if payload, err = json.Marshal(ch); err != nil {
			return "", err
		}
	}
	return string(payload), nil
}

// Announce sends ch to every replica on its own, for a change committed
// outside the store's transactions. If that NOTIFY fails the change is
// delivered here only, and logged; other replicas see it at their next resync.
func (a *PGAnnouncer) Announce(ch models.Change) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.AnnounceTx(a.DB.WithContext(ctx), ch); err != nil {
		slog.Error("notify change; delivered in this process only", "err", err)
		a.Changes.Announce(ch)
	}
}

// Listens counts the times LISTEN was established: 1 plus each reconnect.
func (a *PGAnnouncer) Listens() int64 { return a.listens.Load() }

// Listening is closed once the first LISTEN is in place.
func (a *PGAnnouncer) Listening() <-chan struct{} {
	a.init()
	return a.listening
}

func (a *PGAnnouncer) init() { a.once.Do(func() { a.listening = make(chan struct{}) }) }

// Run listens until ctx ends, reconnecting after any failure. Each time LISTEN
// is (re)established it resyncs Changes, so nothing sent during a gap is missed.
func (a *PGAnnouncer) Run(ctx context.Context) {
	a.init()
	l := &pgxlisten.Listener{
		Connect:        a.Connect,
		ReconnectDelay: a.ReconnectDelay,
		LogError: func(ctx context.Context, err error) {
			if ctx.Err() == nil {
				slog.Warn("change listener", "err", err)
			}
		},
	}
	l.Handle(NotifyChannel, relay{a})
	_ = l.Listen(ctx) // returns only when ctx ends
}

// relay hands notifications to Changes; its backlog step (run right after each
// LISTEN) is the resync.
type relay struct{ a *PGAnnouncer }

func (r relay) HandleNotification(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	ch, err := decodeChange(n.Payload)
	if err != nil {
		return fmt.Errorf("decode change %q: %w", n.Payload, err)
	}
	if ch.Action == ActionRevoke {
		r.a.Changes.Revoked()
		return nil
	}
	r.a.Changes.Announce(ch)
	return nil
}

// decodeChange reads a NOTIFY payload. Every replica decodes every change
// any replica makes, so this is most of what a bystander replica spends on a
// filing: the v2 decoder, with encoding/json's semantics (the payload is
// encoding/json's output), takes about a third of encoding/json's time and a
// seventh of its allocations.
func decodeChange(payload string) (models.Change, error) {
	var ch models.Change
	err := jsonv2.Unmarshal([]byte(payload), &ch, jsonv1.DefaultOptionsV1())
	return ch, err
}

func (r relay) HandleBacklog(context.Context, string, *pgx.Conn) error {
	n := r.a.listens.Add(1) // counted first: whoever the resync wakes sees it
	r.a.Changes.Resync()
	if n == 1 {
		close(r.a.listening)
	} else {
		slog.Info("change listener reconnected; resynced")
	}
	return nil
}
