package bench_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// BenchmarkReplicaRelease measures decide-to-release: from sending a decide to
// the held long-poll's answer arriving, with real `gatehouse serve` processes.
// "one-process" waits and decides on one server; "cross-replica" decides on one
// PostgreSQL replica and waits on another, so the wake crosses NOTIFY/LISTEN.
// Reported: p50/p99 of decide-to-release, and of resolved-to-release (from the
// record's resolved_at, stamped in the decide's transaction just before its
// commit, to the answer's arrival; same machine, same clock).
//
//	GATEHOUSE_TEST_POSTGRES=postgres://… go test ./bench/ -run '^$' -bench ReplicaRelease -benchtime 300x
func BenchmarkReplicaRelease(b *testing.B) {
	bin := gatehousetest.Build(b)
	for _, c := range []struct {
		name, dialect string
		replicas      int
	}{
		{"sqlite/one-process", "sqlite", 1},
		{"postgres/one-process", "postgres", 1},
		{"postgres/cross-replica", "postgres", 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			database := storetest.URL(b, c.dialect)
			deciderSrv := gatehousetest.Start(b, bin, database)
			waiterSrv := deciderSrv
			if c.replicas == 2 {
				waiterSrv = gatehousetest.Start(b, bin, database)
			}
			opToken := gatehousetest.Token(b, bin, database, "operator", "ops")
			agentToken := gatehousetest.Token(b, bin, database, "agent", "bench")
			rig := replicaRig{
				opToken: opToken, waitSrv: waiterSrv, waitWith: waiterSrv.Client(agentToken),
				filer: deciderSrv.Client(agentToken), decider: deciderSrv.Client(opToken),
			}
			for range 10 { // warm the pools and connections
				rig.once(b)
			}
			decide, resolved := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				d, r := rig.once(b)
				decide, resolved = append(decide, d), append(resolved, r)
			}
			b.StopTimer()
			reportPercentiles(b, "decide-to-release", decide)
			reportPercentiles(b, "resolved-to-release", resolved)
		})
	}
}

// replicaRig files on the decider's server, waits on waitSrv, decides on the
// decider's server.
type replicaRig struct {
	opToken  string
	waitSrv  *gatehousetest.Server
	filer    *client.Client
	decider  *client.Client
	waitWith *client.Client
}

// once runs one file, hold, decide, release and returns decide-to-release and
// resolved-to-release.
func (r replicaRig) once(b *testing.B) (time.Duration, time.Duration) {
	ctx := context.Background()
	req, err := r.filer.File(ctx, api.NewRequest{
		Title:   "bench",
		Options: []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
	}, "")
	if err != nil {
		b.Fatal(err)
	}
	type answer struct {
		r   *api.Wait
		err error
		at  time.Time
	}
	r.waitSrv.AwaitWaiters(b, r.opToken, 0)
	done := make(chan answer, 1)
	go func() {
		got, err := r.waitWith.Wait(ctx, req.ID, 300*time.Second)
		done <- answer{got, err, time.Now()}
	}()
	r.waitSrv.AwaitWaiters(b, r.opToken, 1)
	start := time.Now()
	if _, err := r.decider.Decide(ctx, req.ID, req.Version, "once", ""); err != nil {
		b.Fatal(err)
	}
	got := <-done
	if got.err != nil || got.r.Status != "resolved" || got.r.TimedOut || got.r.ResolvedAt == nil {
		b.Fatalf("wait answered %+v %v, want the decision", got.r, got.err)
	}
	return got.at.Sub(start), got.at.Sub(*got.r.ResolvedAt)
}

// reportPercentiles reports p50 and p99 of ds in milliseconds.
func reportPercentiles(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) float64 {
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
}

// BenchmarkNotifyHop isolates what crossing replicas adds: one announcer's
// NOTIFY until another announcer's subscriber (its own listen connection, its
// own Changes) receives it, one change at a time.
//
//	GATEHOUSE_TEST_POSTGRES=postgres://… go test ./bench/ -run '^$' -bench NotifyHop -benchtime 2000x
func BenchmarkNotifyHop(b *testing.B) {
	url := storetest.URL(b, "postgres")
	db, err := store.OpenDB(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	listen := func() *store.PGAnnouncer {
		a := store.NewPGAnnouncer(url, db, store.NewChanges())
		wg.Go(func() { a.Run(ctx) })
		<-a.Listening()
		return a
	}
	from, to := listen(), listen()
	sub := to.Changes.Subscribe(16)
	defer sub.Close()
	hops := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		from.Announce(models.Change{RequestID: "req_bench", Version: i + 1, Action: "decide"})
		for ch := range sub.C {
			if ch.Version == i+1 {
				break
			}
		}
		hops = append(hops, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, "notify-hop", hops)
}
