package web

import (
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// inboxFilter reads ?status=open|resolved|all, ?kind=, ?risk= (open by default).
func inboxFilter(c echo.Context) (views.Filter, error) {
	f := views.Filter{Status: c.QueryParam("status"), Kind: c.QueryParam("kind"), Risk: c.QueryParam("risk"), Sort: c.QueryParam("sort")}
	if f.Sort != "" && f.Sort != "review" {
		return f, invalid("sort must be review, or absent for newest first")
	}
	if f.Status == "" {
		f.Status = models.StatusOpen
	}
	switch f.Status {
	case models.StatusOpen, models.StatusResolved, "all":
	default:
		return f, invalid("status must be open, resolved or all")
	}
	return f, nil
}

// showInbox is GET /: the requests that match the filter, newest first.
func (s *Server) showInbox(c echo.Context) error {
	f, err := inboxFilter(c)
	if err != nil {
		return err
	}
	rows, next, err := s.store.ListRequests(c.Request().Context(), store.ListFilter{Status: f.Status, Kind: f.Kind, Risk: f.Risk, Cursor: c.QueryParam("cursor")})
	if err != nil {
		return err
	}
	in := views.Inbox{
		Page: s.pageOf(c, "", views.WSURL(f)), Filter: f, Cards: cardsOfRows(c.Request().Context(), s.runtimeNames(), Principal(c), rows), NextCursor: next, Now: time.Now(),
	}
	in.Page.View = "inbox"
	if c.QueryParam("cursor") != "" {
		in.Page.WSURL = "" // an older page is a static view: live updates go to the first page
	}
	if f.Sort == "review" {
		views.SortByReview(in.Cards) // this page's cards, critical first
	}
	if in.Remembered, err = s.rememberedRows(c.Request().Context()); err != nil {
		return err
	}
	if in.Suggestions, err = s.suggestionRows(c.Request().Context()); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.InboxPage(in))
}

// showRequest is GET /requests/{id}: the card, its detail, source and audit trail.
func (s *Server) showRequest(c echo.Context) error {
	return s.renderRequest(c, http.StatusOK, c.Param("id"), nil)
}

func (s *Server) renderRequest(c echo.Context, status int, id string, n *views.Notice) error {
	ctx := c.Request().Context()
	r, err := s.store.GetRequest(ctx, id)
	if err != nil {
		return err
	}
	trail, err := s.store.AuditTrail(ctx, r.ID)
	if err != nil {
		return err
	}
	d := views.Detail{
		Page: s.pageOf(c, r.Title, views.WSURL(views.Filter{ID: r.ID})), Card: cardOf(ctx, s.runtimeNames(), Principal(c), r), Detail: r.Detail,
		SourceRef: sortedRef(r.SourceRef), Audit: toAudit(r.ID, trail), Notice: n, Now: time.Now(),
	}
	return render(c, status, views.DetailPage(d))
}
