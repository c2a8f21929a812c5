package web

import (
	"bytes"
	"encoding/json"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// apiOption is an option as the API shows it.
type apiOption struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Effect string `json:"effect,omitempty"`
	Saves  string `json:"saves,omitempty"` // what the option saves beyond this decision
}

type apiActuation struct {
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
}

// apiRequest is the record as the API returns it (DESIGN.md "Request record").
type apiRequest struct {
	ID            string            `json:"id"`
	Kind          string            `json:"kind"`
	Status        string            `json:"status"`
	Version       int               `json:"version"`
	Title         string            `json:"title"`
	Summary       string            `json:"summary"`
	Detail        string            `json:"detail"`
	Risk          *string           `json:"risk"` // null when the filer gave none
	Tool          string            `json:"tool,omitempty"`
	Command       string            `json:"command,omitempty"`
	Options       []apiOption       `json:"options"`
	AllowAnswer   bool              `json:"allow_answer"`
	DefaultOption *string           `json:"default_option"`
	Decision      *string           `json:"decision"`
	Answer        *string           `json:"answer"`
	Note          *string           `json:"note"`
	Source        string            `json:"source"`
	SourceRef     map[string]string `json:"source_ref"`
	RuntimeID     *string           `json:"runtime_id"`
	PendingID     *string           `json:"pending_id,omitempty"`
	CreatedBy     string            `json:"created_by"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
	ExpiresAt     string            `json:"expires_at"`
	ResolvedAt    *string           `json:"resolved_at"`
	DecidedBy     *string           `json:"decided_by"`
	DecidedVia    *string           `json:"decided_via"`
	Actuation     apiActuation      `json:"actuation"`
	Hold          *apiHold          `json:"hold"`
}

// apiHold is present while a rule holds an open request: at Until, unless
// someone decides first, Then is decided with decided_via "rule:RULE (window)".
type apiHold struct {
	Rule  string `json:"rule"`
	Until string `json:"until"`
	Then  string `json:"then"`
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func toAPIRequest(r *models.Request) apiRequest {
	out := apiRequest{
		ID: r.ID, Kind: r.Kind, Status: r.Status, Version: r.Version, Title: r.Title, Summary: r.Summary,
		Detail: r.Detail, Risk: nilIfEmpty(r.Risk), Tool: r.Tool, Command: r.Command, Options: make([]apiOption, len(r.Options)),
		AllowAnswer: r.AllowAnswer, Decision: r.Decision, Answer: r.Answer, Note: r.Note, Source: r.Source,
		SourceRef: r.SourceRef, RuntimeID: r.RuntimeID, PendingID: r.PendingID, CreatedBy: r.CreatedBy,
		CreatedAt: rfc3339(r.CreatedAt), UpdatedAt: rfc3339(r.UpdatedAt), ExpiresAt: rfc3339(r.ExpiresAt),
		DecidedBy: r.DecidedBy, DecidedVia: r.DecidedVia,
		Actuation: apiActuation{State: r.ActuationState, Attempts: r.Attempts},
	}
	for i, o := range r.Options {
		out.Options[i] = apiOption(o)
	}
	if r.DefaultOption != "" {
		d := r.DefaultOption
		out.DefaultOption = &d
	}
	if r.SourceRef == nil {
		out.SourceRef = map[string]string{}
	}
	if r.ResolvedAt != nil {
		s := rfc3339(*r.ResolvedAt)
		out.ResolvedAt = &s
	}
	if r.Held() {
		out.Hold = &apiHold{Rule: *r.HoldRule, Until: rfc3339(*r.HoldUntil), Then: *r.HoldThen}
	}
	if out.Actuation.State == "" {
		out.Actuation.State = models.ActuationNone
	}
	return out
}

func toModelOptions(in []apiOption) []models.Option {
	if in == nil {
		return nil
	}
	out := make([]models.Option, len(in))
	for i, o := range in {
		out[i] = models.Option(o)
	}
	return out
}

// bindJSON decodes a JSON body strictly: unknown fields and trailing data are
// errors, so a typo is refused rather than silently ignored.
func bindJSON(c echo.Context, v any) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		// Echo's body limit fails the read with a 413 *echo.HTTPError.
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return models.Errorf(codeInvalidJSON, "the body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return models.Errorf(codeInvalidJSON, "the body is not valid JSON for this route: %v", err)
	}
	if dec.More() {
		return models.Errorf(codeInvalidJSON, "the body has data after the JSON object")
	}
	return nil
}
