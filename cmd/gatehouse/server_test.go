package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// testServer is a real Gatehouse on a temporary SQLite database, served by
// httptest, with an agent token for the command under test and an operator
// client for the test's decisions.
type testServer struct {
	URL      string
	Agent    string // agent token
	Store    *store.Store
	Changes  *store.Changes
	Operator *client.Client
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	e := webtest.New(t, "sqlite", web.Config{})
	return &testServer{
		URL: e.URL, Agent: e.Token(models.RoleAgent, "claude"), Store: e.Store, Changes: e.Changes,
		Operator: client.New(e.URL, e.Token(models.RoleOperator, "alice")),
	}
}

// created returns a channel that yields the id of the next request filed:
// subscribe before starting the command, so the create is never missed.
func (ts *testServer) created(t *testing.T) <-chan string {
	t.Helper()
	sub := ts.Changes.Subscribe(64)
	t.Cleanup(sub.Close)
	ids := make(chan string, 1)
	go func() {
		for ch := range sub.C {
			if ch.Action == "create" {
				ids <- ch.RequestID
				return
			}
		}
	}()
	return ids
}

// decide records the operator's decision on the request's current version.
func (ts *testServer) decide(t *testing.T, id, option, note string) {
	t.Helper()
	ctx := context.Background()
	r, err := ts.Operator.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Operator.Decide(ctx, id, r.Version, option, note); err != nil {
		t.Fatal(err)
	}
}

// result is what one run of the binary's run function produced.
type result struct {
	code           int
	stdout, stderr string
}

// start runs the gatehouse command with args in the background.
func start(args []string, stdin []byte) <-chan result {
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, bytes.NewReader(stdin), &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	return done
}
