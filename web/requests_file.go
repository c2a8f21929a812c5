package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// toNewRequest is a filing body as the store takes it.
func toNewRequest(in api.NewRequest) (models.NewRequest, error) {
	n := models.NewRequest{
		Kind: in.Kind, Title: in.Title, Summary: in.Summary, Detail: in.Detail, Risk: in.Risk,
		Tool: in.Tool, Command: in.Command, Options: toModelOptions(in.Options), AllowAnswer: in.AllowAnswer,
		DefaultOption: in.DefaultOption, Source: in.Source, SourceRef: in.SourceRef, RuntimeID: in.RuntimeID,
		Unsealed:  in.Sealed != nil && !*in.Sealed,
		Approvers: toModelApprovers(in.Approvers),
	}
	if in.ExpiresIn != nil {
		d, err := seconds("expires_in", *in.ExpiresIn)
		if err != nil {
			return n, err
		}
		n.ExpiresIn = d
	}
	return n, nil
}

// fileRequest files a request: 201 with the record, or 200 with the first record
// when an Idempotency-Key repeats.
func (s *Server) fileRequest(c echo.Context) error {
	var in api.NewRequest
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	n, err := toNewRequest(in)
	if err != nil {
		return err
	}
	if wait, err := s.allowFiling(Principal(c)); err != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
		return err
	}
	r, created, err := s.FileRequest(c.Request().Context(), Principal(c), n, c.Request().Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	c.Response().Header().Set("Location", "/v1/requests/"+r.ID)
	return c.JSON(status, toAPIRequest(r))
}

// FileRequest files a request for any route (API, MCP, pending grants): the rules
// in force judge it in the store, and a rule's decision is counted like any
// other.
func (s *Server) FileRequest(ctx context.Context, p models.Principal, n models.NewRequest, idemKey string) (*models.Request, bool, error) {
	r, created, err := s.store.CreateRequest(ctx, p, n, idemKey)
	if err == nil && created && r.DecidedVia != nil && strings.HasPrefix(*r.DecidedVia, "rule:") {
		s.metrics.countDecision(r, nil)
	}
	return r, created, err
}
