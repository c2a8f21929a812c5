package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// acpModulesEnv names a node_modules holding the three real ACP agents and
// the ACP TypeScript SDK the editor script runs on (.ci/run installs them
// from .ci/acp/package.json and its lock file).
const acpModulesEnv = "GATEHOUSE_TEST_ACP_NODE_MODULES"

// acpGuard bounds each wait for the editor to report something: the agents'
// start-up (several seconds of Node) included. A deadline for a hang, not a
// speed assertion.
const acpGuard = 2 * time.Minute

// acpCommand is what every mock model asks to run: a file in the session's
// project shows that it ran.
const acpCommand = "touch ran.txt"

// acpKit is the editor script (testdata/acp/editor.mjs) in a temporary
// directory beside a link to the node_modules, so its import of the SDK
// resolves as an editor's own would.
type acpKit struct {
	node, script, modules string
}

func realACP(t *testing.T) acpKit {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Skipf(t, "node is not on PATH: the real ACP agents and the editor script need Node.js")
	}
	modules := os.Getenv(acpModulesEnv)
	if modules == "" {
		testkit.Skipf(t, "%s is not set: no ACP agents or ACP TypeScript SDK to run (npm ci --prefix .ci/acp, then %s=$PWD/.ci/acp/node_modules)", acpModulesEnv, acpModulesEnv)
	}
	modules, err = filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"@agentclientprotocol/sdk", "@zed-industries/claude-agent-acp", "@zed-industries/codex-acp-linux-x64", "@google/gemini-cli"} {
		b, err := os.ReadFile(filepath.Join(modules, pkg, "package.json"))
		if err != nil {
			testkit.Skipf(t, "%s=%s has no %s: %v", acpModulesEnv, modules, pkg, err)
		}
		var meta struct {
			Version string `json:"version"`
		}
		_ = json.Unmarshal(b, &meta)
		t.Logf("%s %s", pkg, meta.Version)
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "acp", "editor.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "editor.mjs")
	if err := os.WriteFile(script, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return acpKit{node: node, script: script, modules: modules}
}

// acpAgent is one real ACP agent: how to run it offline against its mock
// model, and the ids of the options it offers.
type acpAgent struct {
	name string
	// allow and reject are its allow_once and reject_once option ids.
	allow, reject string
	// rejectStop is how a turn ends once the command was refused: Codex aborts
	// the turn, the others tell the model and end it normally.
	rejectStop string
	// start writes the agent's configuration under home, starts its mock
	// model, and returns its command line, its environment (added to the
	// common one) and what the mock was asked, for a failing test's log.
	start func(t *testing.T, modules, home string) (argv, env []string, seen func() string)
}

var acpAgents = []acpAgent{
	{name: "claude-agent-acp", allow: "allow", reject: "reject", rejectStop: "end_turn", start: startClaudeACP},
	{name: "codex-acp", allow: "approved", reject: "abort", rejectStop: "cancelled", start: startCodexACP},
	{name: "gemini-cli", allow: "proceed_once", reject: "cancel", rejectStop: "end_turn", start: startGeminiACP},
}

// startClaudeACP: the model is the Anthropic mock; the switches turn off the
// bundled Claude Code's update checks, telemetry and error reports, and a
// fresh plugin blocklist keeps it from fetching one at start.
func startClaudeACP(t *testing.T, modules, home string) ([]string, []string, func() string) {
	return claudeACP(t, modules, home, modelmock.NewAnthropic(t, acpCommand))
}

// claudeACP runs claude-agent-acp against the given Anthropic mock.
func claudeACP(t *testing.T, modules, home string, model *modelmock.Anthropic) ([]string, []string, func() string) {
	blocklist := fmt.Sprintf(`{"fetchedAt":%q,"plugins":[]}`, time.Now().UTC().Format(time.RFC3339))
	writeFile(t, filepath.Join(home, ".claude", "plugins", "blocklist.json"), blocklist)
	return []string{filepath.Join(modules, ".bin", "claude-agent-acp")}, []string{
		"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=sk-ant-gatehouse-test-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1",
	}, model.Seen
}

// codexACPConfig points codex-acp at the Responses mock and turns off what
// would reach the internet (plugin sync, update checks, analytics, feedback).
const codexACPConfig = `model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
env_key = "GATEHOUSE_TEST_MOCK_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"
`

func startCodexACP(t *testing.T, modules, home string) ([]string, []string, func() string) {
	model := modelmock.NewResponses(t, acpCommand, "The command writes a file.")
	codexHome := filepath.Join(home, ".codex")
	writeFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(codexACPConfig, model.URL))
	return []string{filepath.Join(modules, "@zed-industries", "codex-acp-linux-x64", "bin", "codex-acp")},
		[]string{"CODEX_HOME=" + codexHome, "GATEHOUSE_TEST_MOCK_KEY=mock"}, model.Seen
}

// startGeminiACP: GOOGLE_GEMINI_BASE_URL alone selects the gateway sign-in
// (no key); usage statistics, which would be posted to Google, are off.
func startGeminiACP(t *testing.T, modules, home string) ([]string, []string, func() string) {
	model := modelmock.NewGemini(t, acpCommand)
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{"privacy":{"usageStatisticsEnabled":false}}`)
	return []string{filepath.Join(modules, ".bin", "gemini"), "--acp"},
		[]string{"GOOGLE_GEMINI_BASE_URL=" + model.URL}, model.Seen
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// acpEnv is the whole environment of the editor and so of what it starts:
// nothing of the developer's own leaks in, and HTTPS_PROXY/HTTP_PROXY point
// at a trap that catches any request meant for past 127.0.0.1.
func acpEnv(home, proxy string, extra ...string) []string {
	env := []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir(), "TERM=dumb", "LANG=C.UTF-8",
		"SHELL=/bin/bash", "NO_COLOR=1",
		"HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "https_proxy=" + proxy, "http_proxy=" + proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	return append(env, extra...)
}

// acpEvent is one line the editor script prints.
type acpEvent struct {
	Event      string          `json:"event"`
	ID         string          `json:"id"`
	Op         string          `json:"op"`
	Req        int             `json:"req"`
	SessionID  string          `json:"sessionId"`
	StopReason string          `json:"stopReason"`
	Message    string          `json:"message"`
	ToolCall   json.RawMessage `json:"toolCall"`
	Options    []struct {
		OptionID string `json:"optionId"`
		Kind     string `json:"kind"`
		Name     string `json:"name"`
	} `json:"options"`
	AgentInfo json.RawMessage `json:"agentInfo"`
	PID       int             `json:"pid"`
	Code      *int            `json:"code"`
	Signal    *string         `json:"signal"`
}

// acpEditor is one run of the editor script, and the agent it started.
type acpEditor struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	events  chan acpEvent
	backlog []acpEvent
	stderr  *lockedBuffer
	root    string // the sessions' projects are under it
	pid     int    // the agent command's process (the bridge, when there is one)
	seen    func() string
}

// lockedBuffer is the stderr of the editor, the bridge and the agent; a
// test can wait for a line of the bridge's to show up in it.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced at each write
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

// waitFor waits until the output holds text.
func (l *lockedBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	timer := time.NewTimer(acpGuard)
	defer timer.Stop()
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), text) {
			l.mu.Unlock()
			return
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("waited %s for %q on stderr:\n%s", acpGuard, text, l.String())
		}
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startEditor runs the editor script on argv in its own process group, and
// waits for the agent to answer initialize. Cleanup ends the group.
func (k acpKit) startEditor(t *testing.T, env []string, seen func() string, argv ...string) *acpEditor {
	t.Helper()
	cmd := exec.Command(k.node, append([]string{k.script}, argv...)...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e := &acpEditor{cmd: cmd, in: in, events: make(chan acpEvent, 64), stderr: &lockedBuffer{}, root: t.TempDir(), seen: seen}
	cmd.Stderr = e.stderr
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(e.events)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev acpEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = acpEvent{Event: "error", Message: "not JSON: " + sc.Text()}
			}
			e.events <- ev
		}
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// Codex never ends on its stdin closing, and Gemini CLI's relaunched
		// child outlives its parent's SIGTERM: end the whole group.
		_ = in.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(testkit.CapWait):
			t.Errorf("the editor did not end within %s of SIGTERM", testkit.CapWait)
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	e.pid = e.wait(t, "the agent's start", func(ev acpEvent) bool { return ev.Event == "spawned" }).PID
	ready := e.wait(t, "initialize", func(ev acpEvent) bool { return ev.Event == "ready" })
	t.Logf("agent up (initialize answered) in %s: %s", time.Since(began).Round(time.Millisecond), ready.AgentInfo)
	return e
}

func (e *acpEditor) send(t *testing.T, cmd map[string]any) {
	t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := e.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("write to the editor: %v", err)
	}
}

// wait returns the first event match accepts, keeping the others for later
// waits. An error event fails the test, and so does the agent's exit unless
// it is what match waits for.
func (e *acpEditor) wait(t *testing.T, what string, match func(acpEvent) bool) acpEvent {
	t.Helper()
	for i, ev := range e.backlog {
		if match(ev) {
			e.backlog = append(e.backlog[:i:i], e.backlog[i+1:]...)
			return ev
		}
	}
	timer := time.NewTimer(acpGuard)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-e.events:
			switch {
			case !ok:
				t.Fatalf("waiting for %s: the editor ended\n%s", what, e.log())
			case match(ev):
				return ev
			case ev.Event == "error" || ev.Event == "agent_exit":
				t.Fatalf("waiting for %s: %+v\n%s", what, ev, e.log())
			}
			e.backlog = append(e.backlog, ev)
		case <-timer.C:
			t.Fatalf("waited %s for %s\n%s", acpGuard, what, e.log())
		}
	}
}

// log is what a failing test shows: the editor's and agent's stderr, the
// model calls.
func (e *acpEditor) log() string {
	return fmt.Sprintf("model calls: %s\nstderr:\n%s", e.seen(), e.stderr.String())
}

// acpSession is one session the editor opened, in a git project of its own.
type acpSession struct {
	id, sessionID, project string
}

func (e *acpEditor) newSession(t *testing.T, id string) acpSession {
	t.Helper()
	project, err := os.MkdirTemp(e.root, id+"-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	e.send(t, map[string]any{"op": "new", "id": id, "cwd": project})
	ev := e.wait(t, "session/new "+id, func(ev acpEvent) bool { return ev.Event == "session" && ev.ID == id })
	return acpSession{id: id, sessionID: ev.SessionID, project: project}
}

// prompt starts the turn in which the model asks for acpCommand.
func (e *acpEditor) prompt(t *testing.T, s acpSession) {
	t.Helper()
	e.send(t, map[string]any{"op": "prompt", "id": s.id, "text": "run the command"})
}

// permission waits for the session's permission request at the editor.
func (e *acpEditor) permission(t *testing.T, s acpSession) acpEvent {
	t.Helper()
	return e.wait(t, "session/request_permission in "+s.id, func(ev acpEvent) bool {
		return ev.Event == "permission" && ev.SessionID == s.sessionID
	})
}

func (e *acpEditor) answer(t *testing.T, req int, optionID string) {
	t.Helper()
	e.send(t, map[string]any{"op": "answer", "req": req, "optionId": optionID})
}

func (e *acpEditor) answerCancelled(t *testing.T, req int) {
	t.Helper()
	e.send(t, map[string]any{"op": "answer", "req": req, "cancelled": true})
}

func (e *acpEditor) cancel(t *testing.T, s acpSession) {
	t.Helper()
	e.send(t, map[string]any{"op": "cancel", "id": s.id})
}

// stopReason waits for the end of the session's turn.
func (e *acpEditor) stopReason(t *testing.T, s acpSession) string {
	t.Helper()
	return e.wait(t, "the end of the turn in "+s.id, func(ev acpEvent) bool { return ev.Event == "stop" && ev.ID == s.id }).StopReason
}

// ran reports whether the model's command ran in the session's project.
func (s acpSession) ran() bool {
	_, err := os.Stat(filepath.Join(s.project, "ran.txt"))
	return err == nil
}

// optionKind is the kind of the option with the given id in a request.
func (ev acpEvent) optionKind(id string) string {
	for _, o := range ev.Options {
		if o.OptionID == id {
			return o.Kind
		}
	}
	return ""
}

// checkAgentOptions: the agent offers the option ids the tests answer with,
// of the kinds the bridge maps.
func checkAgentOptions(t *testing.T, a acpAgent, ev acpEvent) {
	t.Helper()
	if ev.optionKind(a.allow) != "allow_once" || ev.optionKind(a.reject) != "reject_once" {
		t.Fatalf("%s offered %+v; want %s (allow_once) and %s (reject_once)", a.name, ev.Options, a.allow, a.reject)
	}
	if !strings.Contains(string(ev.ToolCall), acpCommand) {
		t.Fatalf("the permission request does not show the command: %s", ev.ToolCall)
	}
}

// checkTrap fails the test if anything tried to reach past the mocks.
func checkTrap(t *testing.T, tr *trap) {
	t.Helper()
	if caught := tr.caught(); len(caught) > 0 {
		t.Errorf("an agent tried to reach the internet: %v", caught)
	}
}

// TestRealACPAgents runs each real ACP agent under the editor script on the
// ACP TypeScript SDK, straight (no bridge), offline: the agent's mock model
// asks for a shell command and the permission request reaches the editor,
// whose answer decides whether the command runs. One agent process serves
// the subtests, a session each.
func TestRealACPAgents(t *testing.T) {
	kit := realACP(t)
	for _, a := range acpAgents {
		t.Run(a.name, func(t *testing.T) {
			home := t.TempDir()
			tr, proxy := newTrap(t)
			argv, env, seen := a.start(t, kit.modules, home)
			e := kit.startEditor(t, acpEnv(home, proxy, env...), seen, argv...)
			t.Run("the editor's allow runs the command", func(t *testing.T) {
				s := e.newSession(t, "allow")
				e.prompt(t, s)
				p := e.permission(t, s)
				checkAgentOptions(t, a, p)
				e.answer(t, p.Req, a.allow)
				if stop := e.stopReason(t, s); stop != "end_turn" || !s.ran() {
					t.Fatalf("stop %q, ran %v: want end_turn and the command run\n%s", stop, s.ran(), e.log())
				}
			})
			t.Run("the editor's reject does not", func(t *testing.T) {
				s := e.newSession(t, "reject")
				e.prompt(t, s)
				p := e.permission(t, s)
				e.answer(t, p.Req, a.reject)
				if stop := e.stopReason(t, s); stop != a.rejectStop || s.ran() {
					t.Fatalf("stop %q, ran %v: want %s and nothing run", stop, s.ran(), a.rejectStop)
				}
			})
			t.Run("session/cancel ends the turn cancelled", func(t *testing.T) {
				s := e.newSession(t, "cancel")
				e.prompt(t, s)
				p := e.permission(t, s)
				e.cancel(t, s)
				e.answerCancelled(t, p.Req)
				if stop := e.stopReason(t, s); stop != "cancelled" || s.ran() {
					t.Fatalf("stop %q, ran %v: want cancelled and nothing run", stop, s.ran())
				}
			})
			checkTrap(t, tr)
		})
	}
}
