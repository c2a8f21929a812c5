package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// A filing while PostgreSQL cannot be reached is 503 unavailable with a
// Retry-After, as /healthz says, not a 500 that tells the client not to retry.
func TestDatabaseDownIsUnavailable(t *testing.T) {
	database := storetest.URL(t, "postgres")
	u, err := url.Parse(database)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	a, err := app.New(app.Config{Database: u.String(), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	defer func() { cancel(); testkit.Recv(t, ran, "Run to return") }()
	_, agent, err := a.Store.CreateToken(ctx, "agent", "deploy-bot")
	if err != nil {
		t.Fatal(err)
	}
	file := func() *http.Response {
		req, _ := http.NewRequest("POST", a.URL()+"/v1/requests", strings.NewReader(`{"kind":"approval","title":"Deploy",`+
			`"options":[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]}`))
		req.Header.Set("Authorization", "Bearer "+agent)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := file(); resp.StatusCode != http.StatusCreated {
		t.Fatalf("with the database up: %d", resp.StatusCode)
	}

	p.stop() // the database goes away: every connection cut, none accepted
	for _, c := range []struct {
		name string
		do   func() *http.Response
	}{
		{"a filing", file},
		{"healthz", func() *http.Response {
			resp, err := http.Get(a.URL() + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := c.do()
			defer resp.Body.Close()
			var body struct{ Error, Detail string }
			b, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(b, &body)
			if resp.StatusCode != http.StatusServiceUnavailable || body.Error != "unavailable" || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("%d %s Retry-After %q; want 503 unavailable with Retry-After", resp.StatusCode, b, resp.Header.Get("Retry-After"))
			}
		})
	}
}

// proxy forwards TCP to a database until stop, which cuts every connection
// and refuses new ones: the database as a client sees it going down.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startProxy(t *testing.T, upstream string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", upstream, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(up, c); up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); c.Close() })
		}
	})
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
