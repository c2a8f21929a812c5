package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// listenTimeout bounds how long serve waits for its first LISTEN: a replica that
// cannot hear other replicas' changes must not take traffic.
const listenTimeout = 30 * time.Second

// announceAcrossReplicas makes a PostgreSQL store announce through NOTIFY and
// relays every replica's notifications into changes, so waiters here wake
// wherever a change was made. With SQLite (one replica) changes stays the
// store's in-process announcer. It returns once the listener is in place.
func announceAcrossReplicas(ctx context.Context, bg *sync.WaitGroup, database string, store *models.Store, changes *models.Changes) error {
	if !models.IsPostgres(database) {
		return nil
	}
	pg := models.NewPGAnnouncer(database, store.DB, changes)
	bg.Go(func() { pg.Run(ctx) })
	select {
	case <-pg.Listening():
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(listenTimeout):
		return fmt.Errorf("no LISTEN on %s within %s", models.NotifyChannel, listenTimeout)
	}
	// Only now: until the listener is in place, a NOTIFY would reach no one here.
	store.Announcer = pg
	slog.Info("announcing changes across replicas", "channel", models.NotifyChannel)
	return nil
}
