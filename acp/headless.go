package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/internal/jsonl"
)

// RunHeadless runs the agent with the bridge's own client in the editor's place:
// initialize, session/new in cwd, one session/prompt with the text, the
// agent's message chunks and tool calls printed to out. Every permission
// request goes to Gatehouse alone. With WaitReply set, each turn that ends
// waits up to WaitReply for the operator's answer on the session's waiting
// item, and the answer is the next session/prompt. It returns 0 when the
// last turn ends end_turn. When ctx ends, the turn is cancelled
// (session/cancel).
func (b *Bridge) RunHeadless(ctx context.Context, argv []string, cwd, prompt string, out, stderr io.Writer) int {
	b.Headless = true
	fromClient, clientOut := io.Pipe()
	clientIn, toClient := io.Pipe()
	c := &headlessClient{out: out, toBridge: &lineWriter{w: clientOut}, waiting: map[string]chan envelope{}, gone: make(chan struct{})}
	result := make(chan string, 1)
	go func() {
		reason, err := c.session(ctx, b, cwd, prompt)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse acp:", err)
		}
		result <- reason
		clientOut.Close() // the editor's side ends: the agent is stopped
	}()
	go c.read(clientIn)
	code, err := b.Run(context.WithoutCancel(ctx), argv, fromClient, toClient, stderr)
	toClient.Close()
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse acp:", err)
	}
	reason := <-result
	fmt.Fprintf(stderr, "gatehouse acp: turn ended %q, agent exited %d\n", reason, code)
	if reason == "end_turn" {
		return 0
	}
	return 1
}

// headlessClient is the ACP client side of a headless run.
type headlessClient struct {
	out      io.Writer
	toBridge *lineWriter

	mu      sync.Mutex
	nextID  int
	waiting map[string]chan envelope // our requests by id
	closed  bool
	gone    chan struct{} // closed when the agent's output ends
}

// turnGrace bounds the wait for the agent's answer once the turn is cancelled.
const turnGrace = 10 * time.Second

// session runs initialize, session/new and session/prompt, then, while the
// operator replies to the waiting item a turn's end opened, a session/prompt
// with each reply; it returns the last prompt's stopReason.
func (c *headlessClient) session(ctx context.Context, b *Bridge, cwd, prompt string) (string, error) {
	if _, err := c.call(ctx, MethodInitialize, map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": false},
		"clientInfo":         map[string]string{"name": "gatehouse-acp-headless", "title": "Gatehouse (headless)", "version": "1"},
	}); err != nil {
		return "", err
	}
	res, err := c.call(ctx, MethodSessionNew, map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if err != nil {
		return "", err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(res, &s) != nil || s.SessionID == "" {
		return "", errors.New("session/new answered no sessionId")
	}
	for {
		reason, err := c.turn(ctx, s.SessionID, prompt)
		if err != nil || reason == "cancelled" || b.WaitReply <= 0 || ctx.Err() != nil {
			return reason, err
		}
		reply, ok := b.awaitReply(ctx, s.SessionID, c.gone)
		if !ok {
			return reason, nil
		}
		fmt.Fprintf(c.out, "[reply] %s\n", oneLine(reply))
		prompt = reply
	}
}

// turn sends one session/prompt and returns its stopReason.
func (c *headlessClient) turn(ctx context.Context, sessionID, prompt string) (string, error) {
	ch, err := c.start(MethodSessionPrompt, map[string]any{
		"sessionId": sessionID, "prompt": []any{map[string]string{"type": "text", "text": prompt}},
	})
	if err != nil {
		return "", err
	}
	var m envelope
	var ok bool
	select {
	case m, ok = <-ch:
	case <-ctx.Done():
		_ = c.toBridge.send(notification{JSONRPC: "2.0", Method: MethodSessionCancel, Params: map[string]string{"sessionId": sessionID}})
		select {
		case m, ok = <-ch:
		case <-time.After(turnGrace):
			return "", errors.New("the agent did not end the cancelled turn")
		}
	}
	if !ok {
		return "", errors.New("the agent ended before the turn did")
	}
	if m.Error != nil {
		return "", fmt.Errorf("session/prompt: %s", m.Error)
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(m.Result, &r)
	fmt.Fprintln(c.out)
	return r.StopReason, nil
}

// call sends one request and waits for its answer.
func (c *headlessClient) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch, err := c.start(method, params)
	if err != nil {
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("the agent ended before answering %s", method)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *headlessClient) start(method string, params any) (<-chan envelope, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("the agent ended before %s", method)
	}
	id := c.nextID
	c.nextID++
	ch := make(chan envelope, 1)
	c.waiting[idKey(json.RawMessage(strconv.Itoa(id)))] = ch
	c.mu.Unlock()
	err := c.toBridge.send(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	return ch, err
}

// read takes the agent's messages: answers to our requests, session updates
// to print, and requests: a permission request is the bridge's to answer,
// any other is refused (the client offers no file system or terminal).
func (c *headlessClient) read(r io.Reader) {
	_ = jsonl.EachLine(r, func(line []byte) error {
		var m envelope
		if json.Unmarshal(line, &m) != nil {
			return nil
		}
		switch {
		case m.isResponse():
			c.mu.Lock()
			ch := c.waiting[idKey(m.ID)]
			delete(c.waiting, idKey(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case m.isRequest() && m.Method == MethodRequestPermission:
			c.printPermission(m.Params)
		case m.isRequest():
			_ = c.toBridge.send(struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   any             `json:"error"`
			}{"2.0", m.ID, map[string]any{"code": -32601, "message": "method not found: " + m.Method}})
		case m.Method == MethodSessionUpdate:
			c.printUpdate(m.Params)
		}
		return nil
	})
	c.mu.Lock()
	c.closed = true
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
	c.mu.Unlock()
	close(c.gone)
}

// printUpdate prints the agent's message text and its tool calls.
func (c *headlessClient) printUpdate(raw json.RawMessage) {
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       json.RawMessage
			ToolCallID    string `json:"toolCallId"`
			Title         string `json:"title"`
			Kind          string `json:"kind"`
			Status        string `json:"status"`
		} `json:"update"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	u := p.Update
	switch u.SessionUpdate {
	case "agent_message_chunk":
		var t struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(u.Content, &t) == nil && t.Type == "text" {
			fmt.Fprint(c.out, t.Text)
		}
	case "tool_call":
		fmt.Fprintf(c.out, "\n[tool %s] %s (%s)\n", u.ToolCallID, oneLine(u.Title), u.Kind)
	case "tool_call_update":
		if u.Status != "" {
			fmt.Fprintf(c.out, "\n[tool %s] %s\n", u.ToolCallID, u.Status)
		}
	}
}

func (c *headlessClient) printPermission(raw json.RawMessage) {
	var p PermissionParams
	if json.Unmarshal(raw, &p) == nil {
		fmt.Fprintf(c.out, "\n[permission] %s: asking Gatehouse\n", oneLine(p.ToolCall.Title))
	}
}
