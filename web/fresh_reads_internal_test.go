package web

// An internal test: freshReads is unexported, and its guarantee (never answer
// with a read that began before the call) is easiest to show at its own seam.

import (
	"context"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
)

func TestFreshReads(t *testing.T) {
	var mu sync.Mutex
	version := 1
	loads := 0
	gate := make(chan struct{})
	entered := make(chan struct{}, 10)
	f := newFreshReads(func(ctx context.Context, id string) (*models.Request, error) {
		mu.Lock()
		loads++
		v := version
		mu.Unlock()
		entered <- struct{}{}
		<-gate // the loader runs on the reader's goroutine, not the test's
		return &models.Request{ID: id, Version: v}, nil
	})
	waiting := make(chan struct{}, 10)
	f.onWait = func() { waiting <- struct{}{} }
	ctx := context.Background()

	t.Run("a caller after a change never joins a read begun before it", func(t *testing.T) {
		first := make(chan *models.Request)
		go func() { r, _ := f.get(ctx, "req_1"); first <- r }()
		testkit.Recv(t, entered, "entered") // the first read has begun and saw version 1
		mu.Lock()
		version = 2 // a commit lands while that read is in flight
		mu.Unlock()
		second := make(chan *models.Request, 5)
		for range 5 {
			go func() { r, _ := f.get(ctx, "req_1"); second <- r }()
		}
		// The five queue behind the first read; then let it finish.
		for range 5 {
			testkit.Recv(t, waiting, "waiting")
		}
		gate <- struct{}{}
		if r := testkit.Recv(t, first, "first"); r.Version != 1 {
			t.Fatalf("first read: v%d", r.Version)
		}
		testkit.Recv(t, entered, "entered") // one queued read for all five
		gate <- struct{}{}
		for range 5 {
			if r := testkit.Recv(t, second, "second"); r.Version != 2 {
				t.Fatalf("a caller after the change got v%d", r.Version)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if loads != 2 {
			t.Fatalf("%d loads, want 2 (one for the five)", loads)
		}
	})
}
