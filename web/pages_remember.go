package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// rememberCard adds to c what remembering shows: the grant that decided r;
// for each option its filer declared remembering on, the exact match it
// stores (the store derives the same from the same record); and, on an open
// request an allow may be remembered for, the "Remember…" control.
func rememberCard(r *models.Request, c *views.Card) {
	c.GrantID = deref(r.GrantID)
	choices := rules.RememberChoices(r.Tool, r.Command)
	storable := len(choices) > 0 && r.Approvers == nil && r.PendingID == nil
	for i, o := range r.Options {
		if o.Remember == nil || o.Effect != models.EffectAllow {
			continue
		}
		// The store keeps exactly this, or nothing (a plain allow): say which.
		c.Options[i].Remembers = &views.Remembers{Scope: o.Remember.Scope, For: o.Remember.For}
		if storable && models.RememberFits(o.Remember.Scope, r.SourceRef) == nil {
			c.Options[i].Remembers = &views.Remembers{Words: choices[0].Words, Rule: rules.RememberRuleText(r.Tool, choices[0].Match),
				Match: choices[0].Match, Scope: o.Remember.Scope, For: o.Remember.For}
		}
	}
	if !storable {
		return
	}
	if !r.Open() {
		return
	}
	f := &views.RememberForm{}
	for _, o := range r.Options {
		if o.Effect == models.EffectAllow && o.Plain() {
			f.Option = o.ID
			break
		}
	}
	if f.Option == "" {
		return
	}
	for _, ch := range choices {
		f.Choices = append(f.Choices, views.RememberChoice{Match: ch.Match, Words: ch.Words, Rule: rules.RememberRuleText(r.Tool, ch.Match)})
	}
	for _, sc := range []string{models.ScopeSession, models.ScopeProject, models.ScopeRuntime} {
		if models.RememberFits(sc, r.SourceRef) == nil {
			f.Scopes = append(f.Scopes, sc)
		}
	}
	c.Remember = f
}

// rememberedRows are the live remembered allows as the inbox lists them.
func (s *Server) rememberedRows(ctx context.Context) ([]views.RememberedRow, error) {
	rs, ok := s.store.(RememberStore)
	if !ok {
		return nil, nil
	}
	list, now, err := rs.ListRemembered(ctx)
	if err != nil {
		return nil, err
	}
	var out []views.RememberedRow
	for i := range list {
		g := &list[i]
		if !g.Live(now) {
			continue
		}
		row := views.RememberedRow{ID: g.ID, Words: g.Words, Rule: rules.RememberRuleText(g.Tool, g.Match),
			ScopeText: scopeText(g), CreatedBy: g.CreatedBy, Uses: g.Uses}
		if g.ExpiresAt != nil {
			row.ExpiresAt = *g.ExpiresAt
		}
		out = append(out, row)
	}
	return out, nil
}

func scopeText(g *models.Remembered) string {
	switch g.Scope {
	case models.ScopeSession:
		return "session " + views.ShortSession(g.Session) + " of " + g.Filer
	case models.ScopeProject:
		return "project " + g.Cwd + " of " + g.Filer
	}
	return "everything " + g.Filer + " files"
}

// revokeFromPage is a "Revoke" button: the grant ends at once, and the page
// goes back where it was.
func (s *Server) revokeFromPage(c echo.Context) error {
	rs, ok := s.store.(RememberStore)
	if !ok {
		return models.Errorf(models.ECodeNotFound, "this server keeps no remembered allows")
	}
	if _, err := rs.RevokeRemembered(c.Request().Context(), c.Param("id"), Principal(c).Label(), via(c)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, localPath(c.FormValue("back")))
}
