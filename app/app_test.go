package app_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func TestApp(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("runs until its context ends, then stops cleanly", func(t *testing.T) {
			a, err := app.New(app.Config{Database: storetest.URL(t, dialect), Addr: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ctx, cancel := context.WithCancel(context.Background())
			ran := make(chan error, 1)
			go func() { ran <- a.Run(ctx) }()
			resp, err := http.Get(a.URL() + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("healthz %d", resp.StatusCode)
			}
			cancel()
			select {
			case err := <-ran:
				if err != nil {
					t.Fatalf("run: %v", err)
				}
			case <-time.After(20 * time.Second): // a cap, so a hang fails
				t.Fatal("Run did not return after its context ended")
			}
		})
	})

	t.Run("Close without Run gives the address back", func(t *testing.T) {
		a, err := app.New(app.Config{Database: storetest.URL(t, "sqlite"), Addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		addr := a.Addr().String()
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("the listener was not closed: %v", err)
		}
		ln.Close()
		a.Close() // twice is harmless
	})

	t.Run("a bad configuration is refused, naming what is wrong", func(t *testing.T) {
		for _, c := range []struct{ name, db, want string }{
			{"unknown scheme", "mysql://x/y", "unknown scheme"},
			{"missing directory", "sqlite:" + t.TempDir() + "/no/such/g.db", "does not exist"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := app.New(app.Config{Database: c.db, Addr: "127.0.0.1:0"})
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want %q", err, c.want)
				}
			})
		}
	})
}
