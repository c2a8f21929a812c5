package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

func TestMain(m *testing.M) {
	if prefix := os.Getenv(agentEnv); prefix != "" {
		os.Exit(fakeAgent(prefix, os.Stdin, os.Stdout))
	}
	testkit.Main(m)
}

// server is a real Gatehouse with an agent token (the bridge's, and the
// attacker's: the agent holds the same one) and an operator.
type server struct {
	env      *webtest.Env
	agent    *client.Client
	operator *client.Client
}

func newServer(t *testing.T) *server {
	t.Helper()
	return newServerWith(t, app.Config{})
}

// newServerWith starts the server with a configuration (a rules file).
func newServerWith(t *testing.T, cfg app.Config) *server {
	t.Helper()
	cfg.Database = storetest.URL(t, "sqlite")
	e := webtest.NewApp(t, cfg)
	s := &server{env: e, agent: client.New(e.URL, e.Token("agent", "acp-agent")), operator: client.New(e.URL, e.Token("operator", "alice"))}
	s.agent.HTTP, s.operator.HTTP = e.HTTP, e.HTTP
	// Before the server stops (cleanups run last first): a connection dialed
	// and never used would hold its shutdown up for 5 s.
	t.Cleanup(e.HTTP.CloseIdleConnections)
	return s
}

// logLines is the bridge's log, handing over each "filed as" request id.
type logLines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	part  []byte
	filed chan string
	lines chan string
}

func newLog() *logLines {
	return &logLines{filed: make(chan string, 16), lines: make(chan string, 256)}
}

var filedRe = regexp.MustCompile(`filed as (req_\S+):`)

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		line := string(l.part[:i])
		l.part = l.part[i+1:]
		if m := filedRe.FindStringSubmatch(line); m != nil {
			l.filed <- m[1]
		}
		select {
		case l.lines <- line:
		default:
		}
	}
	return len(p), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// await waits for a log line containing s.
func (l *logLines) await(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(testkit.CapWait)
	for {
		select {
		case line := <-l.lines:
			if strings.Contains(line, s) {
				return line
			}
		case <-deadline:
			t.Fatalf("the bridge never logged %q; log:\n%s", s, l.String())
		}
	}
}

// editor is the fake editor on the bridge's stdio, running the bridge with
// the fake agent as its child.
type editor struct {
	t      *testing.T
	in     *io.PipeWriter
	msgs   chan map[string]any
	done   chan result
	log    *logLines
	bridge *acp.Bridge
}

type result struct {
	code int
	err  error
}

// attach starts the bridge attached to a fake editor, with the fake agent
// playing the recorded agent prefix; gh is the bridge's Gatehouse.
func attach(t *testing.T, prefix string, gh acp.Gatehouse, timeout time.Duration) *editor {
	t.Helper()
	t.Setenv(agentEnv, prefix)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e := &editor{t: t, in: inW, msgs: make(chan map[string]any, 64), done: make(chan result, 1), log: newLog()}
	e.bridge = &acp.Bridge{Gatehouse: gh, Timeout: timeout, Log: e.log}
	go func() {
		code, err := e.bridge.Run(context.Background(), []string{os.Args[0]}, inR, outW, io.Discard)
		outW.Close()
		e.done <- result{code, err}
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the bridge wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			e.msgs <- m
		}
		close(e.msgs)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-e.done:
		case <-time.After(testkit.CapWait):
			t.Errorf("the bridge did not end after the editor left")
		}
		if t.Failed() {
			t.Logf("bridge log:\n%s", e.log.String())
		}
	})
	return e
}

func (e *editor) send(msg string) {
	e.t.Helper()
	if _, err := io.WriteString(e.in, msg+"\n"); err != nil {
		e.t.Fatalf("write to the bridge: %v", err)
	}
}

// next is the next message the bridge wrote to the editor.
func (e *editor) next() map[string]any {
	e.t.Helper()
	select {
	case m, ok := <-e.msgs:
		if !ok {
			e.t.Fatalf("the bridge's output ended; log:\n%s", e.log.String())
		}
		return m
	case <-time.After(testkit.CapWait):
		e.t.Fatalf("no message from the bridge; log:\n%s", e.log.String())
	}
	return nil
}

// expect is the next message, which must have the method ("" for a response).
func (e *editor) expect(method string) map[string]any {
	e.t.Helper()
	m := e.next()
	if got, _ := m["method"].(string); got != method {
		e.t.Fatalf("got %v, want a %q message", m, method)
	}
	return m
}

// start runs initialize and session/new (ids 0 and 1, the ids the agents'
// own requests use too) and returns the session id.
func (e *editor) start() string {
	e.t.Helper()
	e.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"zed","title":"Zed","version":"0.999.0"}}}`)
	e.expect("")
	return e.newSession(1, "/home/dev/project")
}

func (e *editor) newSession(id int, cwd string) string {
	e.t.Helper()
	e.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"session/new","params":{"cwd":` + quote(cwd) + `,"mcpServers":[]}}`)
	r := e.expect("")
	sid, _ := r["result"].(map[string]any)["sessionId"].(string)
	if sid == "" {
		e.t.Fatalf("session/new answered %v", r)
	}
	return sid
}

// prompt sends session/prompt and returns the permission request the agent
// asks the editor.
func (e *editor) prompt(id int, session string) map[string]any {
	e.t.Helper()
	e.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"session/prompt","params":{"sessionId":` + quote(session) + `,"prompt":[{"type":"text","text":"run the command"}]}}`)
	return e.expect("session/request_permission")
}

// turnEnd reads the agent's "outcome" chunk and the prompt's stopReason.
func (e *editor) turnEnd() (outcome, stop string) {
	e.t.Helper()
	for {
		m := e.next()
		if m["method"] == "session/update" {
			u := m["params"].(map[string]any)["update"].(map[string]any)
			if c, ok := u["content"].(map[string]any); ok {
				outcome = c["text"].(string)
			}
			continue
		}
		if m["method"] == acp.MethodCancelRequest {
			continue
		}
		r, _ := m["result"].(map[string]any)
		if s, ok := r["stopReason"].(string); ok {
			return outcome, s
		}
		e.t.Fatalf("unexpected message %v", m)
	}
}

// ended is the bridge's exit code once it ended.
func (e *editor) ended() result {
	e.t.Helper()
	select {
	case r := <-e.done:
		e.done <- r // for the cleanup
		return r
	case <-time.After(testkit.CapWait):
		e.t.Fatalf("the bridge did not end; log:\n%s", e.log.String())
	}
	return result{}
}

// filed is the next request the bridge filed, as the operator reads it.
func (s *server) filed(t *testing.T, l *logLines) *api.Request {
	t.Helper()
	id := testkit.Recv(t, l.filed, "a filing by the bridge")
	r, err := s.operator.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// settled waits until the request is no longer open.
func (s *server) settled(t *testing.T, id string) *api.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.CapWait)
	defer cancel()
	r, err := s.operator.WaitSettled(ctx, id)
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	return r
}

func (s *server) decide(t *testing.T, r *api.Request, option string) {
	t.Helper()
	if _, err := s.operator.Decide(context.Background(), r.ID, r.Version, option, ""); err != nil {
		t.Fatalf("decide %s %s: %v", r.ID, option, err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// deadURL is a local address nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}
