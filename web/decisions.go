package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// decideBatch is POST /v1/decisions: each decision taken on its own, as
// decideRequest takes one, answered together in the order sent.
func (s *Server) decideBatch(c echo.Context) error {
	var in api.Batch
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	ans, err := s.DecideBatch(c, in.Decisions)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ans)
}

// DecideBatch checks every decision of a batch before any is taken (a bad
// one refuses the whole batch, so nothing is half sent), then decides each on
// the version its sender saw, through the store's one decide. It goes on when
// the caller hangs up: what it decided is committed either way.
func (s *Server) DecideBatch(c echo.Context, in []api.BatchDecision) (api.BatchAnswer, error) {
	return s.decideBatchOf(c, in, "")
}

// decideBatchOf is DecideBatch for a page group: group, when set, is the
// batch digest the page grouped the requests by, and each must still have it.
func (s *Server) decideBatchOf(c echo.Context, in []api.BatchDecision, group string) (api.BatchAnswer, error) {
	if len(in) == 0 || len(in) > models.MaxBatch {
		return api.BatchAnswer{}, invalid("decisions must hold 1 to %d decisions; it holds %d", models.MaxBatch, len(in))
	}
	p := Principal(c)
	items := make([]store.BatchItem, len(in))
	seen := make(map[string]bool, len(in))
	for i, d := range in {
		switch {
		case d.ID == "":
			return api.BatchAnswer{}, invalid("decisions[%d].id is required", i)
		case d.Version == nil:
			return api.BatchAnswer{}, invalid("decisions[%d].version is required: the version of the request you decided on", i)
		case d.Decision == nil || *d.Decision == "":
			return api.BatchAnswer{}, invalid("decisions[%d].decision is required: one of the offered option ids", i)
		case seen[d.ID]:
			return api.BatchAnswer{}, invalid("decisions[%d]: %s is in the batch twice; send each request once", i, d.ID)
		}
		seen[d.ID] = true
		dec := models.Decision{Version: *d.Version, Option: *d.Decision, Note: emptyNil(d.Note), By: p.Label(), Via: via(c), Voter: &p, Group: group}
		if err := dec.Validate(); err != nil {
			return api.BatchAnswer{}, invalid("decisions[%d]: %s", i, models.ErrorDetail(err))
		}
		items[i] = store.BatchItem{ID: d.ID, Decision: dec}
	}
	batch, outs := s.store.DecideEach(context.WithoutCancel(c.Request().Context()), items)
	ans := api.BatchAnswer{BatchID: batch, Results: make([]api.BatchResult, len(outs))}
	for i, o := range outs {
		s.metrics.countDecision(o.Request, o.Err)
		ans.Results[i] = batchResult(items[i].ID, o)
	}
	return ans, nil
}

// batchResult is one decision's result: what a single decide would have
// answered, as one element of the batch's answer.
func batchResult(id string, o store.Outcome) api.BatchResult {
	if o.Err == nil {
		r := toAPIRequest(o.Request)
		return api.BatchResult{ID: id, Status: http.StatusOK, Request: &r}
	}
	res := api.BatchResult{ID: id, Status: http.StatusInternalServerError, Code: models.ECodeInternal, Detail: "internal error"}
	var de *models.Error
	if !errors.As(o.Err, &de) || de.Code == models.ECodeInternal {
		slog.Error("batch decision", "id", id, "err", o.Err)
		return res
	}
	res.Code, res.Detail = de.Code, de.Detail
	if st, ok := statusOf[de.Code]; ok {
		res.Status = st
	}
	if de.Current != nil {
		r := toAPIRequest(de.Current)
		res.Request = &r
	}
	return res
}
