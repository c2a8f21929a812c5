package web

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is the server's Prometheus registry; one per server, no globals.
type metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	release   prometheus.Histogram
	handler   echo.HandlerFunc
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_decisions_total",
		Help: "Decide calls by outcome: the effect taken (allow, deny, answer) or the refusal's error code.",
	}, []string{"outcome"})
	m.release = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "gatehouse_decide_to_release_seconds",
		Help:    "From a decision's commit to the waiting long-poll answering.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_open_requests", Help: "Requests waiting for a decision.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := s.store.CountOpen(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	waiters := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_waiters", Help: "Long-polls held open.",
	}, func() float64 { return float64(s.waiters.count()) })
	parked := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_parked_waiters", Help: "Long-polls whose connections are parked (held without a goroutine of their own).",
	}, func() float64 { return float64(s.Parked()) })
	m.reg.MustRegister(m.decisions, m.release, open, waiters, parked,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = echo.WrapHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	return m
}

// Registry lets other parts register their own metrics.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

func (m *metrics) serve(c echo.Context) error { return m.handler(c) }

func (m *metrics) countDecision(r *models.Request, err error) {
	outcome := "answer"
	switch {
	case err != nil:
		outcome = models.ErrorCode(err)
	case r.DecisionEffect() != "":
		outcome = r.DecisionEffect()
	}
	m.decisions.WithLabelValues(outcome).Inc()
}
