package chat

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// maxSlackBody bounds a callback's body; Slack's are a few KiB.
const maxSlackBody = 256 << 10

// verifySlack reads the body of a Slack callback and checks its signature
// and timestamp (within five minutes) with the signing secret; nil means
// refused (401 already written). A callback seen before (the same
// signature: a retry or a replay) is answered 200 and not acted on again.
func (s *Service) verifySlack(w http.ResponseWriter, r *http.Request) url.Values {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSlackBody+1))
	if err != nil || len(body) > maxSlackBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return nil
	}
	sv, err := slack.NewSecretsVerifier(r.Header, s.slack.secret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		slog.Warn("chat: refused a Slack callback", "err", err, "remote", r.RemoteAddr)
		http.Error(w, "signature refused", http.StatusUnauthorized)
		return nil
	}
	first, err := s.store.FirstChatCallback(r.Context(), slackCallbackKey(r.Header.Get("X-Slack-Signature")))
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return nil
	}
	if !first {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return nil
	}
	return form
}

// slackCallbackKey names a verified callback by what its signature says,
// the HMAC's bytes, not by how the header spells them: the same callback
// with its hex in capitals is the same callback.
func slackCallbackKey(header string) string {
	sig, err := hex.DecodeString(strings.TrimPrefix(header, "v0="))
	if err != nil {
		return "slack:" + header // not reached: the signature was verified
	}
	return "slack:v0=" + hex.EncodeToString(sig)
}

// handleSlackInteraction takes button clicks and modal submissions.
func (s *Service) handleSlackInteraction(w http.ResponseWriter, r *http.Request) {
	form := s.verifySlack(w, r)
	if form == nil {
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2500*time.Millisecond) // Slack waits 3s
	defer cancel()
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		s.takeSlackAction(ctx, cb)
		w.WriteHeader(http.StatusOK)
	case slack.InteractionTypeViewSubmission:
		s.submitSlackNote(ctx, w, cb)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// takeSlackAction is a click on a message's button: a decision, or the
// modal for a note or an answer. The clicker is told the outcome privately.
func (s *Service) takeSlackAction(ctx context.Context, cb slack.InteractionCallback) {
	if len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	a := cb.ActionCallback.BlockActions[0]
	id, version, option, ok := parseButton(a.Value)
	if !ok {
		return
	}
	if a.ActionID == actionModal {
		s.openSlackNote(ctx, cb, id, version)
		return
	}
	if !strings.HasPrefix(a.ActionID, actionDecide+":") || option == "" {
		return
	}
	text, _ := s.decide(ctx, click{Surface: "slack", Workspace: cb.Team.ID, User: cb.User.ID, ID: id, Version: version, Option: option})
	if err := s.slack.ephemeral(ctx, cb.Channel.ID, cb.User.ID, text); err != nil {
		slog.Warn("chat: ephemeral reply", "err", err)
	}
}

// openSlackNote opens the note/answer modal for a linked operator, on the
// version the message showed (the message's own, not the current one).
func (s *Service) openSlackNote(ctx context.Context, cb slack.InteractionCallback, id string, version int) {
	if _, err := s.store.ChatOperator(ctx, "slack", cb.Team.ID, cb.User.ID); err != nil {
		_ = s.slack.ephemeral(ctx, cb.Channel.ID, cb.User.ID, refusal(err))
		return
	}
	req, err := s.store.GetRequest(ctx, id)
	if err != nil {
		_ = s.slack.ephemeral(ctx, cb.Channel.ID, cb.User.ID, refusal(err))
		return
	}
	v := newView(req, DetailFull, s.baseURL, "")
	v.Version = version
	if _, err := s.slack.api.OpenViewContext(ctx, cb.TriggerID, slackNoteModal(v)); err != nil {
		slog.Warn("chat: views.open", "err", err)
	}
}

// submitSlackNote decides from the modal; a refusal is shown in the modal.
func (s *Service) submitSlackNote(ctx context.Context, w http.ResponseWriter, cb slack.InteractionCallback) {
	id, version, _, ok := parseButton(cb.View.PrivateMetadata)
	if cb.View.CallbackID != callbackNote || !ok {
		w.WriteHeader(http.StatusOK)
		return
	}
	values := map[string]map[string]slack.BlockAction{}
	if cb.View.State != nil {
		values = cb.View.State.Values
	}
	c := click{Surface: "slack", Workspace: cb.Team.ID, User: cb.User.ID, ID: id, Version: version,
		Option: values["choice"]["choice"].SelectedOption.Value, Note: nonEmpty(values["note"]["note"].Value),
		Answer: nonEmpty(values["answer"]["answer"].Value)}
	text, r := s.decide(ctx, c)
	w.Header().Set("Content-Type", "application/json")
	if r == nil {
		_ = json.NewEncoder(w).Encode(slack.NewErrorsViewSubmissionResponse(map[string]string{"note": clip(text, 150)}))
		return
	}
	_ = json.NewEncoder(w).Encode(slack.NewClearViewSubmissionResponse())
}

// handleSlackCommand is `/gatehouse link CODE`: it links the Slack user who
// sends it to the operator who made the code.
func (s *Service) handleSlackCommand(w http.ResponseWriter, r *http.Request) {
	form := s.verifySlack(w, r)
	if form == nil {
		return
	}
	reply := func(text string) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"response_type": "ephemeral", "text": slackEscape(text)})
	}
	args := strings.Fields(form.Get("text"))
	if len(args) != 2 || args[0] != "link" {
		reply("Usage: /gatehouse link CODE (run `gatehouse chat link` to get a code)")
		return
	}
	op, err := s.store.RedeemChatLinkCode(r.Context(), args[1], "slack", form.Get("team_id"), form.Get("user_id"))
	if err != nil {
		reply(refusal(err))
		return
	}
	slog.Info("chat: linked", "surface", "slack", "team", form.Get("team_id"), "user", form.Get("user_id"), "operator", op)
	reply("Linked: your clicks here now decide as operator " + op + ".")
}

func nonEmpty(s string) *string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return &s
}
