package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of wait_for_decision's seconds. A call holds at most
// Config.MCPMaxHold (50 s) whatever it asks, below the SDK clients' own 60 s
// timeout; the model calls again to keep waiting.
const (
	MCPMinWait = 1
	MCPMaxWait = 60
)

// defaultMCPOptions are what request_approval offers when the agent names none.
var defaultMCPOptions = []models.Option{{ID: "allow", Label: "Allow", Effect: models.EffectAllow}, {ID: "deny", Label: "Deny", Effect: models.EffectDeny}}

type mcpRequestApprovalIn struct {
	Title     string        `json:"title" jsonschema:"what the operator is asked to approve, in one line"`
	Summary   string        `json:"summary,omitempty" jsonschema:"a few lines of context: why, what happens if allowed"`
	Detail    string        `json:"detail,omitempty" jsonschema:"the full detail (a diff, a command, a plan)"`
	Options   *[]api.Option `json:"options,omitempty" jsonschema:"choices offered: id (lowercase, e.g. allow), label, effect (allow, deny or empty); absent: Allow/Deny"`
	ExpiresIn *int64        `json:"expires_in,omitempty" jsonschema:"seconds until the request expires unanswered, 1 or more; absent: the server default"`
}

type mcpWaitIn struct {
	ID      string `json:"id" jsonschema:"the request id from request_approval"`
	Seconds int    `json:"seconds" jsonschema:"how long to wait, 1 to 60 (one call holds at most 50); call again to keep waiting"`
}

type mcpWaitOut struct {
	Waited  int         `json:"waited" jsonschema:"whole seconds this call actually waited (at most 50, even when seconds asked for more)"`
	Decided bool        `json:"decided" jsonschema:"true once the request is no longer open: read request.status, request.decision and request.note"`
	Request api.Request `json:"request"`
}

type mcpIDIn struct {
	ID string `json:"id" jsonschema:"a request id"`
}

type mcpNotifyIn struct {
	Message string `json:"message" jsonschema:"what the operator should know; nothing is asked"`
}

type mcpConsultIn struct {
	Question      string `json:"question" jsonschema:"the question for the operator"`
	DefaultAction string `json:"default_action" jsonschema:"what you will do meanwhile unless told otherwise"`
}

type mcpIDOut struct {
	ID string `json:"id"`
}

// addMCPTools registers the tools, their schemas spelled portably
// (mcp_schema.go); each is a small function below.
func (s *Server) addMCPTools(srv *mcp.Server) {
	mcp.AddTool(srv, mcpTool[mcpRequestApprovalIn, api.Request]("request_approval", "Ask the operator to approve something before you do it. Returns the request record; then call wait_for_decision with its id."), s.mcpRequestApproval)
	mcp.AddTool(srv, mcpTool[mcpWaitIn, mcpWaitOut]("wait_for_decision", fmt.Sprintf("Wait up to seconds (%d-%d) for the operator to decide request id; one call holds at most %d s (waited says how long it did). Returns at once when already decided; on a timeout returns decided: false, so call it again. Do not sleep between calls.", MCPMinWait, MCPMaxWait, int(s.cfg.MCPMaxHold/time.Second))), s.mcpWaitForDecision)
	mcp.AddTool(srv, mcpTool[mcpIDIn, api.Request]("get_request", "Read one request you filed: its status, decision, answer and note."), s.mcpGetRequest)
	mcp.AddTool(srv, mcpTool[mcpNotifyIn, mcpIDOut]("notify_operator", "Leave the operator a one-way FYI on the inbox page. Never blocks and never alerts; returns its id."), s.mcpNotifyOperator)
	mcp.AddTool(srv, mcpTool[mcpConsultIn, mcpIDOut]("consult_operator", "Ask the operator a question without stopping: returns an id at once; carry on with default_action and read a later reply with get_request."), s.mcpConsultOperator)
}

// mcpFile files a request as the calling token.
func (s *Server) mcpFile(ctx context.Context, n models.NewRequest) (*models.Request, error) {
	who, ok := mcpCallerOf(ctx)
	if !ok {
		return nil, models.Errorf(models.ECodeUnauthenticated, "no caller")
	}
	if _, err := s.allowFiling(who.principal); err != nil {
		return nil, mcpError(err)
	}
	r, _, err := s.store.CreateRequest(ctx, who.principal, n, "")
	return r, mcpError(err)
}

// mcpVisible loads a request the caller filed; any other id is answered as
// one that does not exist.
func (s *Server) mcpVisible(ctx context.Context, id string) (*models.Request, error) {
	who, ok := mcpCallerOf(ctx)
	if !ok {
		return nil, models.Errorf(models.ECodeUnauthenticated, "no caller")
	}
	r, err := s.store.GetRequest(ctx, id)
	if err == nil && !canSee(who.principal, r) {
		err = models.Errorf(models.ECodeNotFound, "no request %s", id)
	}
	return r, mcpError(err)
}

func (s *Server) mcpRequestApproval(ctx context.Context, _ *mcp.CallToolRequest, in mcpRequestApprovalIn) (*mcp.CallToolResult, api.Request, error) {
	// The same limits as POST /v1/requests: absent means the default, a
	// value given must be one the REST API takes.
	var expiresIn time.Duration
	if in.ExpiresIn != nil {
		d, err := seconds("expires_in", *in.ExpiresIn)
		if err != nil {
			return nil, api.Request{}, err
		}
		expiresIn = d
	}
	opts := defaultMCPOptions
	if in.Options != nil {
		opts = toModelOptions(*in.Options)
	}
	r, err := s.mcpFile(ctx, models.NewRequest{
		Kind: models.KindApproval, Title: in.Title, Summary: in.Summary, Detail: in.Detail, Options: opts,
		Source: "session", ExpiresIn: expiresIn,
	})
	if err != nil {
		return nil, api.Request{}, err
	}
	return nil, toAPIRequest(r), nil
}

// mcpWaitForDecision answers at once when the request is not open; otherwise
// it holds a waiter slot and waits on the change announcement until the
// request changes, seconds pass, the client goes, or the server stops.
func (s *Server) mcpWaitForDecision(ctx context.Context, req *mcp.CallToolRequest, in mcpWaitIn) (*mcp.CallToolResult, mcpWaitOut, error) {
	if in.Seconds < MCPMinWait || in.Seconds > MCPMaxWait {
		return nil, mcpWaitOut{}, invalid("seconds must be a whole number from %d to %d", MCPMinWait, MCPMaxWait)
	}
	r, err := s.mcpVisible(ctx, in.ID)
	if err != nil {
		return nil, mcpWaitOut{}, err
	}
	if !r.Open() {
		return nil, mcpWaitOut{Waited: 0, Decided: true, Request: toAPIRequest(r)}, nil
	}
	who, _ := mcpCallerOf(ctx)
	slot, err := s.takeWaitSlot(who.principal)
	if err != nil {
		// Words a model acts on: the detail says when to call again.
		return nil, mcpWaitOut{}, fmt.Errorf("too many waits: %s", err.(*models.Error).Detail)
	}
	defer slot.release()
	// The wait ends when the MCP call is cancelled or its HTTP request ends.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(who.httpCtx, cancel)()
	hold := s.mcpHold(in.Seconds)
	stopProgress := s.reportProgress(ctx, req, hold)
	start := time.Now()
	r, timedOut, err := s.waitChange(ctx, r.ID, hold, func(r, first *models.Request) bool {
		return !r.Open() || r.Version != first.Version
	})
	elapsed := time.Since(start)
	stopProgress()
	if err != nil {
		return nil, mcpWaitOut{}, mcpError(err)
	}
	waited := int(elapsed / time.Second)
	if timedOut && elapsed >= hold {
		waited = int((hold + time.Second/2) / time.Second)
	}
	return nil, mcpWaitOut{Waited: waited, Decided: !r.Open(), Request: toAPIRequest(r)}, nil
}

func (s *Server) mcpGetRequest(ctx context.Context, _ *mcp.CallToolRequest, in mcpIDIn) (*mcp.CallToolResult, api.Request, error) {
	r, err := s.mcpVisible(ctx, in.ID)
	if err != nil {
		return nil, api.Request{}, err
	}
	return nil, toAPIRequest(r), nil
}

// mcpNotifyOperator files a silent "waiting" item: shown on the page, never
// decided, never an alert.
func (s *Server) mcpNotifyOperator(ctx context.Context, _ *mcp.CallToolRequest, in mcpNotifyIn) (*mcp.CallToolResult, mcpIDOut, error) {
	title, summary := splitMessage(in.Message)
	r, err := s.mcpFile(ctx, models.NewRequest{Kind: models.KindWaiting, Title: title, Summary: summary, Source: "session"})
	if err != nil {
		return nil, mcpIDOut{}, err
	}
	return nil, mcpIDOut{ID: r.ID}, nil
}

// mcpConsultOperator files a question the agent does not wait for.
func (s *Server) mcpConsultOperator(ctx context.Context, _ *mcp.CallToolRequest, in mcpConsultIn) (*mcp.CallToolResult, mcpIDOut, error) {
	if strings.TrimSpace(in.DefaultAction) == "" {
		return nil, mcpIDOut{}, invalid("default_action is required: say what you will do unless told otherwise")
	}
	title, more := splitMessage(in.Question)
	summary := "Unless told otherwise the agent will: " + in.DefaultAction
	if more != "" {
		summary = more + "\n\n" + summary
	}
	if len(summary) > models.MaxSummary {
		return nil, mcpIDOut{}, invalid("question and default_action together are longer than %d bytes", models.MaxSummary)
	}
	r, err := s.mcpFile(ctx, models.NewRequest{Kind: models.KindQuestion, Title: title, Summary: summary, AllowAnswer: true, Source: "session"})
	if err != nil {
		return nil, mcpIDOut{}, err
	}
	return nil, mcpIDOut{ID: r.ID}, nil
}

// splitMessage makes a title of a message's first line (cut to the title
// limit) and keeps the whole message as the summary when the title is not all
// of it.
func splitMessage(msg string) (title, summary string) {
	msg = strings.TrimSpace(msg)
	title, _, _ = strings.Cut(msg, "\n")
	title = strings.TrimSpace(title) // a CRLF message leaves a \r, which a title may not hold
	if len(title) > models.MaxTitle {
		cut := models.MaxTitle - len("…")
		for cut > 0 && title[cut]&0xC0 == 0x80 {
			cut--
		}
		title = title[:cut] + "…"
	}
	if title != msg {
		summary = msg
	}
	return title, summary
}

// mcpError keeps domain errors (their code and detail reach the model) and
// hides anything else.
func mcpError(err error) error {
	if err == nil {
		return nil
	}
	var de *models.Error
	if errors.As(err, &de) {
		return err
	}
	slog.Error("mcp", "err", err)
	return models.Errorf(models.ECodeInternal, "internal error")
}
