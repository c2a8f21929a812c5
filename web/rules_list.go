package web

import (
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// apiRules is GET /v1/rules: the rules in force, read-only.
type apiRules struct {
	File     string    `json:"file"`
	Digest   string    `json:"digest"`
	LoadedAt *string   `json:"loaded_at"`
	Rules    []apiRule `json:"rules"`
}

type apiRule struct {
	Name          string   `json:"name"`
	Line          int      `json:"line"`
	Match         apiMatch `json:"match"`
	Action        string   `json:"action"`
	Option        string   `json:"option,omitempty"`
	Window        string   `json:"window,omitempty"`
	WindowSeconds int64    `json:"window_seconds,omitempty"`
	Then          string   `json:"then,omitempty"`
	Summary       string   `json:"summary"` // the rule in words
}

type apiMatch struct {
	Kind    []string `json:"kind,omitempty"`
	Runtime []string `json:"runtime,omitempty"`
	Tool    []string `json:"tool,omitempty"`
	Risk    []string `json:"risk,omitempty"`
	Command string   `json:"command,omitempty"`
	Text    string   `json:"text,omitempty"`
}

func toAPIRules(rs *models.Rules) apiRules {
	out := apiRules{Rules: []apiRule{}}
	if rs == nil {
		return out
	}
	out.File, out.Digest = rs.File, rs.Digest
	at := rfc3339(rs.LoadedAt)
	out.LoadedAt = &at
	for _, r := range rs.List() {
		a := apiRule{Name: r.Name, Line: r.Line, Action: r.Action, Option: r.Option, Then: r.Then, Summary: r.Describe(),
			Match: apiMatch{Kind: r.Kind, Runtime: r.Runtime, Tool: r.Tool, Risk: r.Risk, Command: r.Command, Text: r.Text}}
		if r.Window > 0 {
			a.Window, a.WindowSeconds = r.Window.String(), int64(r.Window.Seconds())
		}
		out.Rules = append(out.Rules, a)
	}
	return out
}

// listRules shows the rules in force; an empty list when there are none.
func (s *Server) listRules(c echo.Context) error {
	var rs *models.Rules
	if s.rules != nil {
		rs = s.rules.Current()
	}
	return c.JSON(http.StatusOK, toAPIRules(rs))
}
