package bench

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// BenchmarkDecideToRelease measures, on loopback, the time from a decide's
// commit (Store.Decide returning) to the waiting long-poll's client holding the
// answer. Reported as p50/p99 in microseconds.
func BenchmarkDecideToRelease(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			started := make(chan struct{}, 1)
			e := webtest.New(b, dialect, web.Config{OnWaitStart: func() { started <- struct{}{} }})
			agent := client.New(e.URL, e.Token(models.RoleAgent, "bench"))
			agent.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			op := models.Principal{ID: "tok_op", Role: models.RoleOperator, Name: "bench"}
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
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
				b.StartTimer()
				if _, err := e.Store.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "ok", By: op.Label(), Via: "api"}); err != nil {
					b.Fatal(err)
				}
				committed := time.Now()
				lat = append(lat, (<-got).Sub(committed))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) { reportNamedPercentiles(b, "", lat) }

// reportNamedPercentiles reports lat's p50 and p99 in µs as prefix+"p50-µs"
// and prefix+"p99-µs" (sorting lat), and returns the p50.
func reportNamedPercentiles(b *testing.B, prefix string, lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(p(0.50), prefix+"p50-µs")
	b.ReportMetric(p(0.99), prefix+"p99-µs")
	return p(0.50)
}
