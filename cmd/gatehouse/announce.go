package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/prometheus/client_golang/prometheus"
)

// listenTimeout bounds how long serve waits for its first LISTEN: a replica that
// cannot hear other replicas' changes must not take traffic.
const listenTimeout = 30 * time.Second

// announceAcrossReplicas makes a PostgreSQL store announce through NOTIFY and
// relays every replica's notifications into changes, so waiters here wake
// wherever a change was made. With SQLite (one replica) changes stays the
// store's in-process announcer (and it returns nil). It returns once the
// listener is in place.
func announceAcrossReplicas(ctx context.Context, bg *sync.WaitGroup, database string, store *models.Store, changes *models.Changes) (*models.PGAnnouncer, error) {
	if !models.IsPostgres(database) {
		return nil, nil
	}
	pg := models.NewPGAnnouncer(database, store.DB, changes)
	bg.Go(func() { pg.Run(ctx) })
	select {
	case <-pg.Listening():
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(listenTimeout):
		return nil, fmt.Errorf("no LISTEN on %s within %s", models.NotifyChannel, listenTimeout)
	}
	// Only now: until the listener is in place, a NOTIFY would reach no one here.
	store.Announcer = pg
	slog.Info("announcing changes across replicas", "channel", models.NotifyChannel)
	return pg, nil
}

// countListens exports how often the listener (re)connected: a rising count
// means the replica keeps losing its LISTEN connection and resyncing.
func countListens(reg prometheus.Registerer, pg *models.PGAnnouncer) {
	if pg == nil {
		return
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gatehouse_change_listens_total",
		Help: "Times this replica's LISTEN connection was established (1 + reconnects); each one resyncs waiters and subscribers.",
	}, func() float64 { return float64(pg.Listens()) }))
}
