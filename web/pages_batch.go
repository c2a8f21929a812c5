package web

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// batchCard marks a card the viewer may decide in a batch with its group:
// the request's batch digest, its action digest up to the ids of the call
// (models.Request.BatchDigest), so one "allow all" covers only requests that
// ask for the same action, whoever asks and from whichever session. Two
// writes to the same file with different details are two groups. A pending
// grant names one exact HTTP request and is never grouped. A viewer who may
// not vote for an allow (outside the policy's groups, the person the filer
// acts for, one who voted) may still refuse: the card joins the group's
// "deny all" alone.
func batchCard(c *views.Card, r *models.Request) {
	if !r.Open() || r.PendingID != nil {
		return
	}
	once, hasOnce := models.OnceOption(r.Options)
	hasOnce = hasOnce && c.NoVote == ""
	deny, hasDeny := models.DenyOption(r.Options)
	if !hasOnce && !hasDeny {
		return
	}
	c.Batch = r.BatchDigest()
	if hasOnce {
		c.BatchOnce = once.ID
	}
	if hasDeny {
		c.BatchDeny = deny.ID
	}
}

// decideBatchFromPage is the inbox's batch form: the group (the batch digest
// the page grouped by), the ids and the versions the page showed, one
// decision per id, and one optional note for all. A request whose batch
// digest is not the group's is refused on its own (not_in_batch). Each is
// decided as POST /v1/decisions decides it; the answer names every one that
// was left open or refused.
func (s *Server) decideBatchFromPage(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return invalid("the form could not be read")
	}
	ids, versions, decisions := form["id"], form["version"], form["decision"]
	if len(versions) != len(ids) || len(decisions) != len(ids) {
		return s.answerBatchPage(c, views.BatchNotice{Kind: "error", Title: "Not done: the form is incomplete; reload the page and try again"})
	}
	note, group := c.FormValue("note"), c.FormValue("group")
	if group == "" {
		return s.answerBatchPage(c, views.BatchNotice{Kind: "error", Title: "Not done: the form names no group; reload the page and try again"})
	}
	in := make([]api.BatchDecision, len(ids))
	for i := range ids {
		v, err := strconv.Atoi(versions[i])
		if err != nil {
			return s.answerBatchPage(c, views.BatchNotice{Kind: "error", Title: "Not done: a version is missing; reload the page and try again"})
		}
		in[i] = api.BatchDecision{ID: ids[i], Version: &v, Decision: &decisions[i], Note: &note}
	}
	ans, err := s.decideBatchOf(c, in, group)
	if err != nil {
		return s.answerBatchPage(c, views.BatchNotice{Kind: "error", Title: "Not done: " + models.ErrorDetail(err)})
	}
	return s.answerBatchPage(c, batchNotice(ans))
}

func (s *Server) answerBatchPage(c echo.Context, n views.BatchNotice) error {
	status := http.StatusOK
	if n.Kind == "error" {
		status = http.StatusBadRequest
	}
	if isHTMX(c) {
		return render(c, status, views.BatchNoticeView(n))
	}
	return render(c, status, views.BatchPage(s.pageOf(c, "Batch", ""), n))
}

// batchNotice says what a batch came to: how many stood, and each that did
// not, named, with why (a changed one with the version it is at now).
func batchNotice(ans api.BatchAnswer) views.BatchNotice {
	n := views.BatchNotice{Kind: "ok", BatchID: ans.BatchID}
	decided, effect := 0, ""
	for _, r := range ans.Results {
		line := views.BatchLine{ID: r.ID, Status: strconv.Itoa(r.Status)}
		if r.Request != nil {
			line.Title = r.Request.Title
		}
		switch {
		case r.Status == http.StatusOK && r.Request.Status == models.StatusOpen:
			a := r.Request.Approvals
			line.Why = "vote recorded; it stays open until its approvals are in"
			if a != nil {
				line.Why = fmt.Sprintf("vote recorded (%d of %d approvals); it stays open until the rest are in", len(a.Votes), a.Required)
			}
			n.Lines = append(n.Lines, line)
			continue
		case r.Status == http.StatusOK:
			decided++
			if effect == "" {
				effect = r.Request.Effect()
			}
			continue
		case r.Code == models.ECodeVersionConflict && r.Request != nil && r.Request.Status == models.StatusOpen:
			line.Why = fmt.Sprintf("left open: it changed after your page showed it (now at version %d); look again and decide it on its own", r.Request.Version)
		case r.Code == models.ECodeAlreadyDecided || r.Code == models.ECodeNotOpen || r.Code == models.ECodeVersionConflict:
			line.Why = "already decided elsewhere; yours was not applied"
		case r.Code == models.ECodeExpired:
			line.Why = "expired before your decision"
		default:
			line.Why = "not decided: " + r.Detail
		}
		n.Kind = "conflict"
		n.Lines = append(n.Lines, line)
	}
	verb := "decided"
	switch effect {
	case models.EffectAllow:
		verb = "allowed once"
	case models.EffectDeny:
		verb = "denied"
	}
	n.Title = fmt.Sprintf("%d of %d %s", decided, len(ans.Results), verb)
	return n
}
