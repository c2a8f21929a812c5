package web

import (
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// showSystem is GET /system: the runtimes, push devices and rules in force,
// read-only. A section whose source the server was not given is left out.
func (s *Server) showSystem(c echo.Context) error {
	ctx := c.Request().Context()
	now := time.Now()
	sys := views.System{Page: s.pageOf(c, "System", ""), Now: now}
	if s.runtimes != nil {
		rows, err := s.runtimes.ListRuntimes(ctx, "") // "": every owner's, as GET /v1/runtimes shows an operator
		if err != nil {
			return err
		}
		sys.Runtimes = &views.RuntimeList{Rows: toRuntimeRows(rows), Now: now}
	}
	if s.devices != nil {
		ds, err := s.devices.ListDevices(ctx, true)
		if err != nil {
			return err
		}
		sys.Devices = &views.DeviceList{Rows: toDeviceRows(ds), Now: now}
	}
	if av := s.availability(); av != nil {
		a, err := av.GetAvailability(ctx, Principal(c).Name)
		if err != nil {
			return err
		}
		v := views.AwayView{Away: a.AwayAt(now)}
		if v.Away && a.AwayUntil != nil {
			v.Until = *a.AwayUntil
		}
		if a.QuietStart != "" {
			v.Quiet = a.QuietStart + "–" + a.QuietEnd + " " + a.QuietTZ
		}
		sys.Away = &v
	}
	if s.rules != nil {
		rl := toRuleList(s.rules.Current())
		sys.Rules = &rl
	}
	var err error
	if sys.Reviews, err = s.reviewUsage(ctx); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.SystemPage(sys))
}

func toRuntimeRows(rows []models.RuntimeStatus) []views.RuntimeRow {
	out := make([]views.RuntimeRow, len(rows))
	for i, rs := range rows {
		rt := rs.Runtime
		out[i] = views.RuntimeRow{
			ID: rt.ID, Name: rt.Name, Machine: rt.Machine, CallbackURL: rt.CallbackURL, LastSeenAt: rt.LastSeenAt,
			LastResult: rt.LastResult, Failures: rt.Failures, Pending: rs.Pending,
		}
		if rt.LastResultAt != nil {
			out[i].LastResultAt = *rt.LastResultAt
		}
	}
	return out
}

func toDeviceRows(ds []models.Device) []views.DeviceRow {
	out := make([]views.DeviceRow, len(ds))
	for i, d := range ds {
		out[i] = views.DeviceRow{
			ID: d.ID, Kind: d.Kind, Name: d.Name, Operator: d.Operator, TokenTail: tokenTail(d.Token),
			CreatedAt: d.CreatedAt, LastResult: d.LastResult, Retired: !d.Live(),
		}
		if d.LastAt != nil {
			out[i].LastAt = *d.LastAt
		}
	}
	return out
}

// tokenTail keeps the last characters of a device token or endpoint: enough to
// tell devices apart, too little to push to one (the page may be on a screen
// others see).
func tokenTail(tok string) string {
	const keep = 8
	if len(tok) <= 2*keep {
		return "…"
	}
	return "…" + tok[len(tok)-keep:]
}

func toRuleList(rs *rules.Rules) views.RuleList {
	if rs == nil {
		return views.RuleList{}
	}
	out := views.RuleList{Loaded: true, File: rs.File, Digest: rs.Digest, LoadedAt: rs.LoadedAt}
	for _, r := range rs.List() {
		row := views.RuleRow{Name: r.Name, Line: r.Line, Action: r.Action, Then: r.Then, Summary: r.Describe()}
		if r.Window > 0 {
			row.Window = r.Window.String()
		}
		out.Rules = append(out.Rules, row)
	}
	return out
}
