package web

import (
	"errors"
	"io"
	"net"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// utcPtr is t in UTC, for an optional time of the API.
func utcPtr(t time.Time) *time.Time {
	t = t.UTC()
	return &t
}

// toAPIRequest is the record as the API shows it.
func toAPIRequest(r *models.Request) api.Request { return r.API() }

func toModelApprovers(in *api.Approvers) *models.Approvers {
	if in == nil {
		return nil
	}
	return &models.Approvers{Groups: in.Groups, Required: in.Required, Note: in.Note, Escalate: models.EscalateFromAPI(in.Escalate)}
}

func toModelOptions(in []api.Option) []models.Option {
	if in == nil {
		return nil
	}
	out := make([]models.Option, len(in))
	for i, o := range in {
		out[i] = models.Option(o)
	}
	return out
}

// bindJSON decodes a JSON body strictly: unknown fields, repeated keys and
// trailing data are errors, so a typo (or a second "title" a log would not
// show) is refused rather than silently ignored.
func bindJSON(c echo.Context, v any) error {
	body, err := io.ReadAll(c.Request().Body)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return models.Errorf(models.ECodeInvalid, "the body did not arrive in time")
	}
	if err != nil {
		// Echo's body limit fails the read with a 413 *echo.HTTPError.
		return err
	}
	return decodeStrict(body, v)
}

// bindOptionalJSON is bindJSON for a route whose body may be absent.
func bindOptionalJSON(c echo.Context, v any) error {
	if c.Request().ContentLength == 0 {
		return nil
	}
	return bindJSON(c, v)
}
