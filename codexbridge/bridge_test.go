package codexbridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"io"
	"net/http/httptest"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/codexbridge"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// replayEnv names the transcript the test binary replays when it runs as the
// fake codex child.
const replayEnv = "GATEHOUSE_TEST_REPLAY_CODEX"

// guard bounds every wait in these tests: a deadline for a hang.
const guard = 30 * time.Second

func TestMain(m *testing.M) {
	if path := os.Getenv(replayEnv); path != "" {
		os.Exit(replay(path, os.Stdin, os.Stdout, os.Stderr))
	}
	testkit.Main(m)
}

// entry is one line of a recorded transcript (testdata/README.md).
type entry struct {
	Seq int             `json:"seq"`
	Dir string          `json:"dir"`
	Msg json.RawMessage `json:"msg"`
}

const toClient, toServer = "server->client", "client->server"

func transcript(path string) ([]entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// replay plays Codex's side of a recording: it writes each recorded
// server->client message as it was sent, and requires each client->server
// message to arrive as recorded (JSON-equal) before it goes on. Anything more
// on stdin after the recording ends is a failure. It is the only fake codex.
func replay(path string, stdin io.Reader, stdout, stderr io.Writer) int {
	entries, err := transcript(path)
	if err != nil {
		fmt.Fprintln(stderr, "replay:", err)
		return 3
	}
	in := bufio.NewReader(stdin)
	for _, e := range entries {
		if e.Dir == toClient {
			if _, err := stdout.Write(append(append([]byte(nil), e.Msg...), '\n')); err != nil {
				fmt.Fprintln(stderr, "replay: write:", err)
				return 3
			}
			continue
		}
		line, err := in.ReadBytes('\n')
		if err != nil {
			fmt.Fprintf(stderr, "replay: seq %d: stdin ended (%v) before %s\n", e.Seq, err, e.Msg)
			return 3
		}
		if !jsonEqual(line, e.Msg) {
			fmt.Fprintf(stderr, "replay: seq %d: got %s want %s\n", e.Seq, bytes.TrimSpace(line), e.Msg)
			return 3
		}
	}
	if line, _ := in.ReadBytes('\n'); len(line) > 0 {
		fmt.Fprintf(stderr, "replay: a message after the recording ended: %s\n", bytes.TrimSpace(line))
		return 3
	}
	return 0
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// session is one bridge run against the replayed recording: the test plays
// the local client on its stdin and stdout.
type session struct {
	t       *testing.T
	entries []entry
	in      *io.PipeWriter
	out     *bufio.Reader
	done    chan error
	stderr  *syncBuffer
}

func startSession(t *testing.T, recording string, gh codexbridge.Gatehouse) *session {
	t.Helper()
	entries, err := transcript("testdata/" + recording)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(replayEnv, "testdata/"+recording)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, entries: entries, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1), stderr: &syncBuffer{}}
	b := &codexbridge.Bridge{Gatehouse: gh, ExpiresIn: 600, Log: s.stderr}
	go func() {
		err := b.Run(context.Background(), []string{os.Args[0]}, inR, outW, s.stderr)
		outW.Close()
		s.done <- err
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

// play runs the recording from the client's side: it sends each recorded
// client->server message (at an approval answer it calls atAnswer instead,
// which sends or not), and checks each server->client message arrives
// byte for byte as Codex sent it.
func (s *session) play(atAnswer func(e entry)) {
	s.t.Helper()
	for _, e := range s.entries {
		switch {
		case e.Dir == toServer && isApprovalAnswer(e.Msg):
			atAnswer(e)
		case e.Dir == toServer:
			s.send(e.Msg)
		default:
			got := s.read()
			if !bytes.Equal(got, append(append([]byte(nil), e.Msg...), '\n')) {
				s.t.Fatalf("seq %d reached the client as\n%s\nwant\n%s", e.Seq, got, e.Msg)
			}
		}
	}
}

func (s *session) send(msg []byte) {
	s.t.Helper()
	if _, err := s.in.Write(append(append([]byte(nil), msg...), '\n')); err != nil {
		s.t.Fatalf("write to the bridge: %v", err)
	}
}

func (s *session) read() []byte {
	s.t.Helper()
	type res struct {
		line []byte
		err  error
	}
	c := make(chan res, 1)
	go func() {
		line, err := s.out.ReadBytes('\n')
		c <- res{line, err}
	}()
	select {
	case r := <-c:
		if r.err != nil {
			s.t.Fatalf("bridge stdout: %v; stderr:\n%s", r.err, s.stderr)
		}
		return r.line
	case <-time.After(guard):
		s.t.Fatalf("no message from the bridge in %s; stderr:\n%s", guard, s.stderr)
	}
	return nil
}

// end closes the client's stdin and waits for the bridge (and the replay,
// which fails on anything unexpected) to exit.
func (s *session) end() {
	s.t.Helper()
	s.in.Close()
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Fatalf("bridge: %v; stderr:\n%s", err, s.stderr)
		}
	case <-time.After(guard):
		s.t.Fatalf("the bridge did not end; stderr:\n%s", s.stderr)
	}
}

func isApprovalAnswer(msg []byte) bool {
	var m struct {
		ID     *json.RawMessage `json:"id"`
		Method string           `json:"method"`
		Result *struct {
			Decision json.RawMessage `json:"decision"`
		} `json:"result"`
	}
	return json.Unmarshal(msg, &m) == nil && m.ID != nil && m.Method == "" && m.Result != nil && m.Result.Decision != nil
}

// gatehouse is a real server with an agent token for the bridge and an
// operator for the test's decisions.
type gatehouse struct {
	env      *webtest.Env
	bridge   *client.Client
	operator *client.Client
}

func newGatehouse(t *testing.T) *gatehouse {
	t.Helper()
	e := webtest.New(t, "sqlite", web.Config{})
	return &gatehouse{env: e, bridge: client.New(e.URL, e.Token(models.RoleAgent, "codex")),
		operator: client.New(e.URL, e.Token(models.RoleOperator, "alice"))}
}

// next returns a function that waits for the next change with the action (and
// the request id, once known): subscribe before causing it.
func (g *gatehouse) next(t *testing.T, action string) func() string {
	t.Helper()
	sub := g.env.Changes.Subscribe(64)
	t.Cleanup(sub.Close)
	return func() string {
		t.Helper()
		deadline := time.After(guard)
		for {
			select {
			case ch := <-sub.C:
				if ch.Action == action {
					return ch.RequestID
				}
			case <-deadline:
				t.Fatalf("no %q change in %s", action, guard)
			}
		}
	}
}

func TestBridgeLocalClientAnswers(t *testing.T) {
	for _, recording := range []string{"appserver-accept.jsonrpc.jsonl", "appserver-decline.jsonrpc.jsonl"} {
		t.Run(recording, func(t *testing.T) {
			g := newGatehouse(t)
			created, cancelled := g.next(t, "create"), g.next(t, "cancel")
			s := startSession(t, recording, g.bridge)
			var id string
			s.play(func(e entry) {
				id = created() // filed in Gatehouse before the client answers
				s.send(e.Msg)  // relayed to Codex unchanged (the replay checks)
				if got := cancelled(); got != id {
					t.Fatalf("cancelled %s, want %s", got, id)
				}
			})
			s.end()
			r, err := g.operator.Get(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "cancelled" {
				t.Fatalf("Gatehouse request %s after the local client answered, want cancelled", r.Status)
			}
			checkCommandRequest(t, r)
		})
	}
}

// checkCommandRequest: the request filed for the recorded command approval,
// with exactly the decisions Codex offered.
func checkCommandRequest(t *testing.T, r *api.Request) {
	t.Helper()
	if r.Kind != "permission" || r.Tool != "Bash" || r.Command != "/bin/bash -lc 'git push origin main'" || r.Title != "Run: git push origin main" {
		t.Fatalf("kind/tool/command/title = %q %q %q %q", r.Kind, r.Tool, r.Command, r.Title)
	}
	want := []api.Option{
		{ID: "accept", Label: "Allow once", Effect: "allow"},
		{ID: "always", Label: "Always allow commands starting `git push origin main`", Effect: "allow"},
		{ID: "cancel", Label: "Stop the turn", Effect: "deny"},
	}
	if !reflect.DeepEqual(r.Options, want) {
		t.Fatalf("options = %+v, want %+v", r.Options, want)
	}
	if r.SourceRef["session"] == "" || r.SourceRef["turn"] == "" || r.SourceRef["item"] != "call_MockApiShell000000000001" || r.SourceRef["cwd"] != "/home/dev/project" {
		t.Fatalf("source_ref = %v", r.SourceRef)
	}
}

func TestBridgeOperatorAnswers(t *testing.T) {
	g := newGatehouse(t)
	created := g.next(t, "create")
	s := startSession(t, "appserver-accept.jsonrpc.jsonl", g.bridge)
	var id string
	s.play(func(e entry) {
		// The client does not answer; the operator allows once, and the
		// bridge sends Codex exactly the answer recorded from a real client.
		id = created()
		r, err := g.operator.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.operator.Decide(context.Background(), id, r.Version, "accept", ""); err != nil {
			t.Fatal(err)
		}
	})
	// Codex's serverRequest/resolved reached the client (checked by play).
	// The client's own answer, late, is not passed on: the replay fails on
	// any message after the recording.
	s.send([]byte(`{"id":0,"result":{"decision":"decline"}}`))
	s.end()
	r, err := g.operator.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "resolved" || r.Decision == nil || *r.Decision != "accept" {
		t.Fatalf("request %s %v", r.Status, r.Decision)
	}
}

func TestBridgeGatehouseDown(t *testing.T) {
	down := httptest.NewServer(nil)
	down.Close()
	s := startSession(t, "appserver-accept.jsonrpc.jsonl", client.New(down.URL, "whatever"))
	s.play(func(e entry) { s.send(e.Msg) })
	s.end()
}

// The agent, with the bridge's own token, tries to approve what it filed.
func TestBridgeAgentCannotApproveItself(t *testing.T) {
	g := newGatehouse(t)
	created := g.next(t, "create")
	s := startSession(t, "appserver-accept.jsonrpc.jsonl", g.bridge)
	s.play(func(e entry) {
		id := created()
		_, err := g.bridge.Decide(context.Background(), id, 1, "accept", "")
		if e, ok := err.(*client.Error); !ok || e.Status != 403 {
			t.Fatalf("the bridge's token deciding: %v, want 403", err)
		}
		s.send(e.Msg)
	})
	s.end()
}

// syncBuffer is a bytes.Buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
