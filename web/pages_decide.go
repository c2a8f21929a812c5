package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// decideFromPage is the card's form: the option clicked, the version the
// operator saw, and an optional note and answer. It works without JavaScript
// (a redirect, or a page that says what won); htmx swaps the notice in place
// and the websocket redraws the card on every page.
func (s *Server) decideFromPage(c echo.Context) error {
	id := c.Param("id")
	v, err := strconv.Atoi(c.FormValue("version"))
	if err != nil {
		return s.answerPage(c, id, nil, invalid("version is missing: reload the page and try again"))
	}
	decision, answer, note := c.FormValue("decision"), c.FormValue("answer"), c.FormValue("note")
	in := api.Decide{Version: &v, Decision: &decision, Answer: &answer, Note: &note}
	if opt := c.FormValue("remember"); opt != "" { // the "Remember…" control's button
		decision = opt
		in.Remember = &api.Remember{Scope: c.FormValue("remember_scope"), For: c.FormValue("remember_for"), Match: c.FormValue("remember_match")}
	}
	r, _, err := s.DecideRemember(c, id, in)
	return s.answerPage(c, id, r, err)
}

// dismissFromPage retires an informational item.
func (s *Server) dismissFromPage(c echo.Context) error {
	id := c.Param("id")
	r, err := s.store.Withdraw(c.Request().Context(), id, Principal(c), models.StatusDismissed)
	return s.answerPage(c, id, r, err)
}

// answerPage says what came of a page action: done; decided elsewhere (409,
// with the state that won); expired (410); or why it was refused.
func (s *Server) answerPage(c echo.Context, id string, r *models.Request, err error) error {
	if err == nil {
		if !isHTMX(c) {
			return c.Redirect(http.StatusSeeOther, localPath(c.FormValue("back")))
		}
		card := toCard(r, Principal(c))
		n := views.Notice{Kind: "ok", Title: "Done: " + views.Outcome(card), Text: r.Title}
		if r.Open() && card.Approvals != nil {
			n.Title = "Vote recorded: " + views.ApprovalsText(card)
		}
		return render(c, http.StatusOK, views.NoticeView(n, views.Ctx{}))
	}
	var de *models.Error
	if !errors.As(err, &de) {
		return err
	}
	status := statusOf[de.Code]
	n := views.Notice{Kind: "error", Title: "Not done", Text: de.Detail}
	if de.Current != nil {
		cur := cardOf(c.Request().Context(), s.runtimeNames(), Principal(c), de.Current)
		n.Current = &cur
	}
	switch de.Code {
	case models.ECodeVersionConflict, models.ECodeAlreadyDecided, models.ECodeNotOpen:
		n.Kind, n.Title = "conflict", "Decided elsewhere"
		n.Text = "Someone or something acted on this request before your click landed; yours was not applied."
		if de.Current != nil && de.Current.Open() {
			n.Title = "Changed since you saw it"
			n.Text = "The request was edited or voted on after your page showed it; look again and decide."
		}
	case models.ECodeExpired:
		n.Kind, n.Title, n.Text = "expired", "Expired", "The request expired before your decision; yours was not applied."
	case models.ECodeNotFound:
		n.Title = "No such request"
	}
	if isHTMX(c) {
		return render(c, status, views.NoticeView(n, views.Ctx{}))
	}
	if de.Code == models.ECodeNotFound {
		return err
	}
	return s.renderRequest(c, status, id, &n)
}
