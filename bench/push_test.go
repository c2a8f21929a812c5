package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
)

type pushRig struct {
	store  *store.Store
	apns   *apnstest.Server
	agent  models.Principal
	events chan push.Event
}

// startPush runs a router on SQLite against the fake APNs with n devices.
func startPush(b *testing.B, cfg push.Config, devices int) *pushRig {
	b.Helper()
	ctx := context.Background()
	st, changes := storetest.Store(b, "sqlite")
	srv, err := apnstest.New()
	if err != nil {
		b.Fatal(err)
	}
	a, err := push.NewAPNs(srv.APNsConfig())
	if err != nil {
		b.Fatal(err)
	}
	tok, _, err := st.CreateToken(ctx, models.RoleAgent, "bench")
	if err != nil {
		b.Fatal(err)
	}
	op := models.Principal{ID: "tok_op", Role: models.RoleOperator, Name: "bench"}
	for range devices {
		if _, _, err := st.RegisterDevice(ctx, op, models.Device{Kind: models.DeviceAPNs, Token: apnstest.NewToken()}); err != nil {
			b.Fatal(err)
		}
	}
	rg := &pushRig{store: st, apns: srv, agent: tok.Principal(), events: make(chan push.Event, 100000)}
	cfg.BaseURL = "https://inbox.example.com"
	cfg.Observe = func(e push.Event) {
		if e.Name == "attempt" || e.Name == "dropped" {
			rg.events <- e
		}
	}
	r := push.NewRouter(cfg, st, changes, push.Senders{APNs: a}, nil)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(runCtx) }()
	b.Cleanup(func() { cancel(); <-done; a.Close(); srv.Close() })
	return rg
}

func (rg *pushRig) file(b *testing.B) *models.Request {
	r, _, err := rg.store.CreateRequest(context.Background(), rg.agent, models.NewRequest{
		Kind: models.KindApproval, Title: "bench", Options: []models.Option{{ID: "ok", Label: "OK"}},
	}, "")
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkPushLatency: from a request's commit (CreateRequest returned) to the
// alert arriving at the APNs server, with coalescing off (the pipeline alone)
// and with the default one-second burst window.
func BenchmarkPushLatency(b *testing.B) {
	for _, c := range []struct {
		name   string
		window time.Duration
	}{{"coalesce=off", -1}, {"coalesce=1s", time.Second}} {
		b.Run(c.name, func(b *testing.B) {
			rg := startPush(b, push.Config{Coalesce: c.window}, 1)
			arrived := make(chan time.Time, 16)
			rg.apns.OnPush = func(apnstest.Push) { arrived <- time.Now() }
			var lat []time.Duration
			for b.Loop() {
				rg.file(b)
				committed := time.Now()
				lat = append(lat, (<-arrived).Sub(committed))
				<-rg.events // the attempt is recorded before the next one
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkPushThroughput: one alert fanned out to 200 devices per op; how many
// deliveries per second the queue and workers (4 per kind) complete against the
// APNs server, each attempt recorded in SQLite.
func BenchmarkPushThroughput(b *testing.B) {
	const devices = 200
	rg := startPush(b, push.Config{Coalesce: -1, Queue: devices}, devices)
	start := time.Now()
	for b.Loop() {
		rg.file(b)
		for range devices {
			if e := <-rg.events; e.Name == "dropped" {
				b.Fatal("queue overflowed")
			}
		}
	}
	b.ReportMetric(float64(b.N*devices)/time.Since(start).Seconds(), "pushes/s")
}
