package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func sessionEvent(t *testing.T, s *store.Store, p models.Principal, session, kind, msg string) *models.Request {
	t.Helper()
	_, w, err := s.SessionEvent(ctx, p, models.SessionEvent{Session: session, Agent: "claude-code", Kind: kind, Cwd: "/home/dev/proj", Machine: "box", Message: msg, CanReply: true})
	if err != nil {
		t.Fatalf("%s event: %v", kind, err)
	}
	return w
}

func sessionState(t *testing.T, s *store.Store, owner, id string) models.SessionView {
	t.Helper()
	list, err := s.ListAgentSessions(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		if v.ID == id && (owner == "" || v.OwnerID == owner) {
			return v
		}
	}
	t.Fatalf("no session %s in %+v", id, list)
	return models.SessionView{}
}

func auditActions(t *testing.T, s *store.Store, id string) []string {
	t.Helper()
	trail, err := s.AuditTrail(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range trail {
		out = append(out, a.Action+"/"+a.Via)
	}
	return out
}

func TestAgentSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		a := agent(t, s, "a")
		b := agent(t, s, "b")
		op := models.Principal{ID: "op", Role: models.RoleOperator, Name: "o"}

		t.Run("a stop opens one waiting item carrying the last message, a second refreshes it", func(t *testing.T) {
			if w := sessionEvent(t, s, a, "s1", models.EventStarted, ""); w != nil {
				t.Fatalf("a start opened %+v", w)
			}
			if v := sessionState(t, s, a.ID, "s1"); v.State != models.SessionWorking || v.Cwd != "/home/dev/proj" || v.Machine != "box" {
				t.Fatalf("after start: %+v", v)
			}
			w := sessionEvent(t, s, a, "s1", models.EventWaiting, "All pushed")
			if w == nil || w.Kind != models.KindWaiting || w.Detail != "All pushed" || w.SourceRef["session"] != "s1" || !w.AllowAnswer || w.Version != 1 {
				t.Fatalf("waiting item: %+v", w)
			}
			v := sessionState(t, s, a.ID, "s1")
			if v.State != models.SessionWaiting || v.LastMessage != "All pushed" || v.OpenRequests != 1 || !v.StateSince.Equal(w.CreatedAt) {
				t.Fatalf("after stop: %+v", v)
			}
			w2 := sessionEvent(t, s, a, "s1", models.EventWaiting, "Still here")
			if w2.ID != w.ID || w2.Version != 2 || w2.Detail != "Still here" {
				t.Fatalf("refresh: %+v, want %s at version 2", w2, w.ID)
			}
			if got, _ := s.GetRequest(ctx, w.ID); got.Detail != "Still here" || got.Version != 2 || !got.Open() {
				t.Fatalf("stored after refresh: %+v", got)
			}
			if v := sessionState(t, s, a.ID, "s1"); v.OpenRequests != 1 || v.LastMessage != "Still here" {
				t.Fatalf("two open after a refresh: %+v", v)
			}
			// An answer to the message before the refresh meets a version conflict.
			ans := "go on"
			if _, err := s.Decide(ctx, w.ID, models.Decision{Version: 1, Answer: &ans, By: op.Label(), Via: models.ViaAPI}); models.ErrorCode(err) != models.ECodeVersionConflict {
				t.Fatalf("answer to the old message: %v", err)
			}
			// A wait with no message (an idle notification) keeps the last one.
			if w3 := sessionEvent(t, s, a, "s1", models.EventWaiting, ""); w3.ID != w.ID || w3.Version != 2 || w3.Detail != "Still here" {
				t.Fatalf("an empty refresh: %+v", w3)
			}
			if got := auditActions(t, s, w.ID); len(got) != 2 || got[1] != "refresh/api" {
				t.Fatalf("trail: %v", got)
			}
		})

		t.Run("a prompt moves it on; the next stop opens a new one", func(t *testing.T) {
			w := sessionEvent(t, s, a, "s2", models.EventWaiting, "Done")
			sessionEvent(t, s, a, "s2", models.EventMoved, "")
			got, _ := s.GetRequest(ctx, w.ID)
			if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaMovedOn || got.Decision != nil || got.Answer != nil {
				t.Fatalf("after moving on: %+v", got)
			}
			if got := auditActions(t, s, w.ID); got[len(got)-1] != "decide/moved_on" {
				t.Fatalf("trail: %v", got)
			}
			if v := sessionState(t, s, a.ID, "s2"); v.State != models.SessionWorking || v.OpenRequests != 0 {
				t.Fatalf("after moving on: %+v", v)
			}
			w2 := sessionEvent(t, s, a, "s2", models.EventWaiting, "Done again")
			if w2.ID == w.ID || !w2.Open() {
				t.Fatalf("the next stop: %+v", w2)
			}
		})

		t.Run("an operator's answer resolves it with no decision, and a stop after opens a new one", func(t *testing.T) {
			w := sessionEvent(t, s, a, "s3", models.EventWaiting, "Which branch?")
			ans := "main"
			got, err := s.Decide(ctx, w.ID, models.Decision{Version: w.Version, Answer: &ans, By: op.Label(), Via: models.ViaAPI})
			if err != nil || got.Status != models.StatusResolved || *got.Answer != "main" || got.Decision != nil || got.DecisionEffect() != "" {
				t.Fatalf("answer: %+v %v", got, err)
			}
			if v := sessionState(t, s, a.ID, "s3"); v.State != models.SessionWorking {
				t.Fatalf("after the answer: %+v", v)
			}
			w2 := sessionEvent(t, s, a, "s3", models.EventWaiting, "Pushed main")
			if w2.ID == w.ID || !w2.Open() {
				t.Fatalf("after an answer, the next stop: %+v", w2)
			}
		})

		t.Run("an item whose reporter cannot carry a reply back takes no answer, until a stop that can refreshes it", func(t *testing.T) {
			_, w, err := s.SessionEvent(ctx, a, models.SessionEvent{Session: "s3b", Agent: "claude-code", Kind: models.EventWaiting, Message: "Done"})
			if err != nil || w.AllowAnswer {
				t.Fatalf("a stop nobody waits behind: %+v %v", w, err)
			}
			ans := "go on"
			if _, err := s.Decide(ctx, w.ID, models.Decision{Version: w.Version, Answer: &ans, By: op.Label(), Via: models.ViaAPI}); models.ErrorCode(err) != models.ECodeInvalid {
				t.Fatalf("an answer nobody would carry: %v", err)
			}
			w2 := sessionEvent(t, s, a, "s3b", models.EventWaiting, "Done, now waiting")
			if w2.ID != w.ID || !w2.AllowAnswer || w2.Version != w.Version+1 {
				t.Fatalf("a stop that waits for a reply: %+v", w2)
			}
			if got, err := s.Decide(ctx, w.ID, models.Decision{Version: w2.Version, Answer: &ans, By: op.Label(), Via: models.ViaAPI}); err != nil || *got.Answer != ans {
				t.Fatalf("the answer: %+v %v", got, err)
			}
		})

		t.Run("session end ends it and resolves its item as ended", func(t *testing.T) {
			w := sessionEvent(t, s, a, "s4", models.EventWaiting, "Bye")
			sessionEvent(t, s, a, "s4", models.EventEnded, "")
			got, _ := s.GetRequest(ctx, w.ID)
			if got.Status != models.StatusResolved || *got.DecidedVia != models.ViaEnded {
				t.Fatalf("after end: %+v", got)
			}
			if v := sessionState(t, s, a.ID, "s4"); v.State != models.SessionEnded {
				t.Fatalf("after end: %+v", v)
			}
		})

		t.Run("another agent's events with the same session id touch nothing of the first's", func(t *testing.T) {
			w := sessionEvent(t, s, a, "shared", models.EventWaiting, "A waits")
			sessionEvent(t, s, b, "shared", models.EventMoved, "")
			sessionEvent(t, s, b, "shared", models.EventEnded, "")
			wb := sessionEvent(t, s, b, "shared", models.EventWaiting, "B waits")
			if wb.ID == w.ID {
				t.Fatal("b's stop refreshed a's waiting item")
			}
			got, _ := s.GetRequest(ctx, w.ID)
			if !got.Open() || got.Version != 1 || got.Detail != "A waits" {
				t.Fatalf("a's item after b's events: %+v", got)
			}
			if v := sessionState(t, s, a.ID, "shared"); v.State != models.SessionWaiting || v.OpenRequests != 1 {
				t.Fatalf("a's session after b's events: %+v", v)
			}
			list, _ := s.ListAgentSessions(ctx, b.ID)
			for _, v := range list {
				if v.OwnerID != b.ID {
					t.Fatalf("b's list shows %+v", v)
				}
			}
			if _, err := s.GetAgentSession(ctx, b.ID, "s1"); models.ErrorCode(err) != models.ECodeNotFound {
				t.Fatalf("b reads a's session s1: %v", err)
			}
			if v, err := s.GetAgentSession(ctx, a.ID, "shared"); err != nil || v.OpenRequests != 1 || v.OwnerID != a.ID {
				t.Fatalf("a's shared session: %+v %v", v, err)
			}
		})

		t.Run("moving on resolves no permission request, and a waiting answer approves none", func(t *testing.T) {
			perm := file(t, s, a, models.NewRequest{Kind: models.KindPermission, SourceRef: map[string]string{"session": "s5"}})
			w := sessionEvent(t, s, a, "s5", models.EventWaiting, "Waiting")
			if v := sessionState(t, s, a.ID, "s5"); v.State != models.SessionBlocked || v.OpenRequests != 2 {
				t.Fatalf("with a permission open: %+v", v)
			}
			ans := "allow"
			if _, err := s.Decide(ctx, w.ID, models.Decision{Version: w.Version, Answer: &ans, By: op.Label(), Via: models.ViaAPI}); err != nil {
				t.Fatal(err)
			}
			sessionEvent(t, s, a, "s5", models.EventMoved, "")
			sessionEvent(t, s, a, "s5", models.EventEnded, "")
			got, _ := s.GetRequest(ctx, perm.ID)
			if !got.Open() || got.Version != 1 {
				t.Fatalf("the permission request after an answer, moving on and ending: %+v", got)
			}
			// A waiting item takes no option: nothing on it can say allow.
			w2 := sessionEvent(t, s, a, "s6", models.EventWaiting, "Waiting")
			if _, err := s.Decide(ctx, w2.ID, models.Decision{Version: w2.Version, Option: "allow", By: op.Label(), Via: models.ViaAPI}); err == nil {
				t.Fatal("an option was decided on a waiting item")
			}
		})

		t.Run("stops at once file one waiting item", func(t *testing.T) {
			const n = 8
			ids := make(chan string, n)
			errs := make(chan error, n)
			for i := range n {
				go func() {
					_, w, err := s.SessionEvent(ctx, a, models.SessionEvent{Session: "race", Agent: "claude-code", Kind: models.EventWaiting, Message: fmt.Sprintf("m%d", i)})
					if err == nil && w != nil {
						ids <- w.ID
					}
					errs <- err
				}()
			}
			seen := map[string]bool{}
			for range n {
				if err := testkit.Recv(t, errs, "an event"); err != nil {
					t.Fatal(err)
				}
			}
			close(ids)
			for id := range ids {
				seen[id] = true
			}
			if len(seen) != 1 {
				t.Fatalf("%d waiting items for one session: %v", len(seen), seen)
			}
			if v := sessionState(t, s, a.ID, "race"); v.OpenRequests != 1 || v.State != models.SessionWaiting {
				t.Fatalf("%+v", v)
			}
		})

		t.Run("bad events are refused and change nothing", func(t *testing.T) {
			for name, e := range map[string]models.SessionEvent{
				"no session": {Agent: "claude-code", Kind: models.EventWaiting},
				"long id":    {Session: string(make([]byte, 201)), Agent: "claude-code", Kind: models.EventWaiting},
				"bad kind":   {Session: "x", Agent: "claude-code", Kind: "approve"},
				"no agent":   {Session: "x", Kind: models.EventWaiting},
			} {
				if _, _, err := s.SessionEvent(ctx, a, e); models.ErrorCode(err) != models.ECodeInvalid {
					t.Fatalf("%s: %v", name, err)
				}
			}
			list, _ := s.ListAgentSessions(ctx, a.ID)
			for _, v := range list {
				if v.ID == "x" {
					t.Fatalf("a refused event made %+v", v)
				}
			}
		})

		t.Run("a session whose reporter cannot carry a reply opens an item that takes no answer", func(t *testing.T) {
			_, w, err := s.SessionEvent(ctx, a, models.SessionEvent{Session: "s8", Agent: "codex-acp", Kind: models.EventWaiting, Message: "Done"})
			if err != nil || w == nil || w.AllowAnswer || !w.Open() {
				t.Fatalf("waiting item %+v, %v; want one open that takes no answer", w, err)
			}
			ans := "go on"
			if _, err := s.Decide(ctx, w.ID, models.Decision{Version: w.Version, Answer: &ans, By: op.Label(), Via: models.ViaAPI}); models.ErrorCode(err) != models.ECodeInvalid {
				t.Fatalf("an answer to an item that takes none: %v", err)
			}
			if got, _ := s.GetRequest(ctx, w.ID); !got.Open() || got.Answer != nil {
				t.Fatalf("after the refused answer: %+v", got)
			}
		})

		t.Run("a last message with control characters is shown cleaned, not refused", func(t *testing.T) {
			w := sessionEvent(t, s, a, "s7", models.EventWaiting, "done\x1b[31m \u202e")
			if w.Detail != "done\uFFFD[31m \uFFFD" {
				t.Fatalf("detail %q", w.Detail)
			}
		})

		t.Run("waiting and blocked sessions come first, longest first", func(t *testing.T) {
			list, err := s.ListAgentSessions(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			seenWorking := false
			var last time.Time
			for _, v := range list {
				waiting := v.State == models.SessionWaiting || v.State == models.SessionBlocked
				if waiting && seenWorking {
					t.Fatalf("a waiting session after a working one: %+v", list)
				}
				if waiting {
					if v.StateSince.Before(last) {
						t.Fatalf("not longest first: %+v", list)
					}
					last = v.StateSince
				} else {
					seenWorking = true
				}
			}
		})
	})
}

func TestAgentSessionRetirement(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		a := agent(t, s, "a")
		now := time.Now()
		s.Now = func() time.Time { return now }
		w := sessionEvent(t, s, a, "old", models.EventWaiting, "Waiting")
		sessionEvent(t, s, a, "quiet", models.EventStarted, "")
		now = now.Add(models.SessionRetireAfter - time.Minute)
		fresh := sessionEvent(t, s, a, "fresh", models.EventWaiting, "Waiting")
		now = now.Add(2 * time.Minute) // old and quiet are a day silent; fresh is not

		t.Run("the sweeper retires sessions silent for a day and resolves their items retired", func(t *testing.T) {
			settled, end := runSweeper(t, s, changes)
			defer end()
			testkit.Recv(t, settled, "the first sweep")
			got, _ := s.GetRequest(ctx, w.ID)
			if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaRetired {
				t.Fatalf("old's item: %+v", got)
			}
			if acts := auditActions(t, s, w.ID); acts[len(acts)-1] != "decide/retired" {
				t.Fatalf("trail: %v", acts)
			}
			for id, want := range map[string]string{"old": models.SessionEnded, "quiet": models.SessionEnded, "fresh": models.SessionWaiting} {
				if v := sessionState(t, s, a.ID, id); v.State != want {
					t.Fatalf("%s: %+v, want %s", id, v, want)
				}
			}
			if got, _ := s.GetRequest(ctx, fresh.ID); !got.Open() {
				t.Fatalf("fresh's item: %+v", got)
			}
		})
		t.Run("a retired session that reports again is live again", func(t *testing.T) {
			w2 := sessionEvent(t, s, a, "old", models.EventWaiting, "Back")
			if w2.ID == w.ID || !w2.Open() {
				t.Fatalf("%+v", w2)
			}
			if v := sessionState(t, s, a.ID, "old"); v.State != models.SessionWaiting {
				t.Fatalf("%+v", v)
			}
		})
	})
}
