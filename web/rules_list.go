package web

import (
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/labstack/echo/v4"
)

// toAPIRules is the rules in force as the API shows them.
func toAPIRules(rs *rules.Rules) api.Rules {
	out := api.Rules{Rules: []api.Rule{}}
	if rs == nil {
		return out
	}
	out.File, out.Digest = rs.File, rs.Digest
	out.LoadedAt = utcPtr(rs.LoadedAt)
	for _, r := range rs.List() {
		a := api.Rule{Name: r.Name, Line: r.Line, Action: r.Action, Option: r.Option, Then: r.Then, Summary: r.Describe(),
			Match: api.RuleMatch{Kind: r.Kind, Runtime: r.Runtime, Tool: r.Tool, Risk: r.Risk, Command: r.Command, Text: r.Text}}
		if r.Window > 0 {
			a.Window, a.WindowSeconds = r.Window.String(), int64(r.Window.Seconds())
		}
		out.Rules = append(out.Rules, a)
	}
	return out
}

// listRules shows the rules in force; an empty list when there are none.
func (s *Server) listRules(c echo.Context) error {
	var rs *rules.Rules
	if s.rules != nil {
		rs = s.rules.Current()
	}
	return c.JSON(http.StatusOK, toAPIRules(rs))
}
