package chat

import (
	"context"
	"errors"
	"log/slog"

	"github.com/gatehousehq/gatehouse/models"
)

// click is a decision taken in a chat: who took it (the chat identity), on
// which request and version, and what they chose.
type click struct {
	Surface, Workspace, User string
	ID                       string
	Version                  int
	Option                   string
	Note, Answer             *string
}

// decide records a chat click as a decision (or a vote) by the operator the
// identity is linked to, through the store's Decide, the page's own path: the
// approval policy, self-approval, notes and versions hold exactly as there.
// It returns what to tell the clicker, and the request as it now stands
// (nil when nothing changed).
func (s *Service) decide(ctx context.Context, c click) (string, *models.Request) {
	p, err := s.store.ChatOperator(ctx, c.Surface, c.Workspace, c.User)
	if err != nil {
		return refusal(err), nil
	}
	who := c.Surface + ":" + c.User
	if c.Workspace != "" {
		who = c.Surface + ":" + c.Workspace + "/" + c.User
	}
	d := models.Decision{Version: c.Version, Option: c.Option, Note: c.Note, Answer: c.Answer, By: p.Label(), Via: c.Surface, Voter: &p, ChatUser: who}
	r, err := s.store.Decide(ctx, c.ID, d)
	if err != nil {
		return refusal(err), nil
	}
	slog.Info("chat: decided", "request", r.ID, "by", p.Label(), "via", c.Surface, "version", r.Version)
	if r.Open() && r.Approvers != nil {
		return "Vote recorded: " + votesText(r), r
	}
	return "Done: " + outcome(r), r
}

// refusal says why a click changed nothing, as the page's notices do.
func refusal(err error) string {
	var de *models.Error
	if !errors.As(err, &de) {
		slog.Error("chat: decide", "err", err)
		return "Not done: Gatehouse could not record that. Try the page."
	}
	switch de.Code {
	case models.ECodeVersionConflict, models.ECodeAlreadyDecided, models.ECodeNotOpen:
		if de.Current != nil && de.Current.Open() {
			return "Not done: the request changed since this message showed it (edited or voted on). Look again and decide."
		}
		if de.Current != nil {
			return "Not done: decided elsewhere — " + outcome(de.Current) + ". Yours was not applied."
		}
		return "Not done: decided elsewhere. Yours was not applied."
	case models.ECodeExpired:
		return "Not done: the request expired before your decision."
	case models.ECodeNotFound:
		return "Not done: " + de.Detail
	}
	return "Not done: " + de.Detail
}
