package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/phase"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// decideRequest records an operator's decision.
func (s *Server) decideRequest(c echo.Context) error {
	var in api.Decide
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	phase.Mark(phase.Decoded)
	r, g, err := s.DecideRemember(c, c.Param("id"), in)
	if err != nil {
		return err
	}
	err = c.JSON(http.StatusOK, decidedAnswer(r, g))
	phase.Mark(phase.Answered)
	return err
}

// decideAttention is decideRequest in the shape runtimes already speak.
func (s *Server) decideAttention(c echo.Context) error {
	var in api.AttentionDecide
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if in.RequestID == "" {
		return invalid("requestId is required")
	}
	r, g, err := s.DecideRemember(c, in.RequestID, in.Decide)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, decidedAnswer(r, g))
}

// Decide validates and records an operator's decision for any route (API, the
// runtime shape, the page's form).
func (s *Server) Decide(c echo.Context, id string, in api.Decide) (*models.Request, error) {
	d, err := decisionOf(c, in)
	if err != nil {
		return nil, err
	}
	return s.DecideAs(c.Request().Context(), id, d)
}

// DecideRemember is Decide that also stores a remembered allow: the one the
// body asks for, or the one the chosen option declares.
func (s *Server) DecideRemember(c echo.Context, id string, in api.Decide) (*models.Request, *models.Remembered, error) {
	d, err := decisionOf(c, in)
	if err != nil {
		return nil, nil, err
	}
	return s.decideRemembering(c.Request().Context(), id, d, in.Remember)
}

func decisionOf(c echo.Context, in api.Decide) (models.Decision, error) {
	if in.Version == nil {
		return models.Decision{}, invalid("version is required: the version of the request you decided on")
	}
	p := Principal(c)
	d := models.Decision{Version: *in.Version, Answer: emptyNil(in.Answer), Note: emptyNil(in.Note), By: p.Label(), Via: via(c), Voter: &p}
	if in.Decision != nil {
		d.Option = *in.Decision
	}
	return d, nil
}

// decidedAnswer is a decide's answer: the record, and what it remembered.
func decidedAnswer(r *models.Request, g *models.Remembered) api.Decided {
	out := api.Decided{Request: toAPIRequest(r)}
	if g != nil {
		a := g.API(g.CreatedAt)
		out.Remembered = &a
	}
	return out
}

// DecideAs records a decision and counts it.
func (s *Server) DecideAs(ctx context.Context, id string, d models.Decision) (*models.Request, error) {
	r, err := s.store.Decide(ctx, id, d)
	s.metrics.countDecision(r, err)
	return r, err
}

func emptyNil(p *string) *string {
	if p == nil || *p == "" {
		return nil
	}
	return p
}
