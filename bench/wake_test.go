package bench

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// BenchmarkWake is the side-by-side's wake figure on the production assembly:
// from just before the operator's decide POST is sent to the waiting /wait
// client holding the answer, sequential rounds, p50/p99 in microseconds. It
// runs with waits parked (the default) and unparked (net/http's goroutine
// holds each), on SQLite and PostgreSQL.
func BenchmarkWake(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, mode := range []struct {
			name   string
			noPark bool
		}{{"parked", false}, {"unparked", true}} {
			b.Run(dialect+"/"+mode.name, func(b *testing.B) {
				started := make(chan struct{}, 1)
				e := webtest.New(b, dialect, web.Config{NoPark: mode.noPark, OnWaitStart: func() { started <- struct{}{} }})
				agent := client.New(e.URL, e.Token(models.RoleAgent, "bench"))
				agent.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
				op := client.New(e.URL, e.Token(models.RoleOperator, "op"))
				op.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
				ctx := context.Background()
				lat := make([]time.Duration, 0, b.N)
				for b.Loop() {
					b.StopTimer()
					id, got := fileAndWait(b, agent, started)
					b.StartTimer()
					sent := time.Now()
					if _, err := op.Decide(ctx, id, 1, "ok", ""); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, (<-got).Sub(sent))
				}
				reportPercentiles(b, lat)
			})
		}
	}
}

// fileAndWait files a request as agent and starts its /wait, returning once
// the server reports the wait started (started, web.Config.OnWaitStart): the
// request's id, and when the waiting client held its answer.
func fileAndWait(b *testing.B, agent *client.Client, started <-chan struct{}) (string, <-chan time.Time) {
	ctx := context.Background()
	r, err := agent.File(ctx, api.NewRequest{Title: "bench", Options: []api.Option{{ID: "ok", Label: "OK", Effect: "allow"}}}, "")
	if err != nil {
		b.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		if _, err := agent.Wait(ctx, r.ID, 60*time.Second); err != nil {
			b.Error(err)
		}
		got <- time.Now()
	}()
	<-started
	return r.ID, got
}
