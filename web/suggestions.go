package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// SuggestStore is what suggestions need (store.Store): the remembered allows
// proposed now, and the operator's accept or dismissal of one, each audited.
type SuggestStore interface {
	ListSuggestions(ctx context.Context) ([]models.Suggestion, error)
	AcceptSuggestion(ctx context.Context, id string, p models.Principal, via, dur string) (*models.Suggestion, *models.Remembered, error)
	DismissSuggestion(ctx context.Context, id string, p models.Principal, via string) (*models.Suggestion, error)
}

// suggestions is the store's SuggestStore, when it keeps one.
func (s *Server) suggestions() SuggestStore {
	ss, _ := s.store.(SuggestStore)
	return ss
}

// suggestionAPI is a suggestion on the wire, its match written as a rule.
func suggestionAPI(g *models.Suggestion) api.Suggestion {
	match, _ := g.Grant()
	return g.API(rules.RememberRuleText(g.Tool, match))
}

// listSuggestions is GET /v1/suggestions: what is proposed now.
func (s *Server) listSuggestions(c echo.Context) error {
	list, err := s.suggestions().ListSuggestions(c.Request().Context())
	if err != nil {
		return err
	}
	out := api.SuggestionList{Suggestions: make([]api.Suggestion, 0, len(list))}
	for i := range list {
		out.Suggestions = append(out.Suggestions, suggestionAPI(&list[i]))
	}
	return c.JSON(http.StatusOK, out)
}

// acceptSuggestion is POST /v1/suggestions/{id}/accept {"for"?}: the grant
// is made as the calling operator.
func (s *Server) acceptSuggestion(c echo.Context) error {
	var in api.AcceptSuggestion
	if err := bindOptionalJSON(c, &in); err != nil {
		return err
	}
	g, gr, err := s.suggestions().AcceptSuggestion(c.Request().Context(), c.Param("id"), Principal(c), via(c), in.For)
	if err != nil {
		return err
	}
	out := api.SuggestionAccepted{Suggestion: suggestionAPI(g), Remembered: gr.API(time.Now())}
	out.Suggestion.Grant.For = gr.For // what was made, not what was offered
	return c.JSON(http.StatusOK, out)
}

// dismissSuggestion is POST /v1/suggestions/{id}/dismiss; again answers it
// unchanged.
func (s *Server) dismissSuggestion(c echo.Context) error {
	g, err := s.suggestions().DismissSuggestion(c.Request().Context(), c.Param("id"), Principal(c), via(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, suggestionAPI(g))
}

// suggestionRows are the suggestions as the inbox shows them.
func (s *Server) suggestionRows(ctx context.Context) ([]views.SuggestionRow, error) {
	ss := s.suggestions()
	if ss == nil {
		return nil, nil
	}
	list, err := ss.ListSuggestions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]views.SuggestionRow, 0, len(list))
	for i := range list {
		g := &list[i]
		match, words := g.Grant()
		out = append(out, views.SuggestionRow{ID: g.ID, Words: words, Rule: rules.RememberRuleText(g.Tool, match),
			ScopeText: "project " + g.Cwd + " of " + g.Filer, Decisions: g.Allows, For: models.SuggestFor})
	}
	return out, nil
}

// acceptSuggestionFromPage is a suggestion's "Remember" button: the grant is made for
// the duration chosen beside it, and the page goes back where it was.
func (s *Server) acceptSuggestionFromPage(c echo.Context) error {
	if _, _, err := s.suggestions().AcceptSuggestion(c.Request().Context(), c.Param("id"), Principal(c), via(c), c.FormValue("for")); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, localPath(c.FormValue("back")))
}

// dismissSuggestionFromPage is a suggestion's "Dismiss" button.
func (s *Server) dismissSuggestionFromPage(c echo.Context) error {
	if _, err := s.suggestions().DismissSuggestion(c.Request().Context(), c.Param("id"), Principal(c), via(c)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, localPath(c.FormValue("back")))
}
