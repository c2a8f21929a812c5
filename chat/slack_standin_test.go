package chat_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/chat/chattest"
)

// slackCall is one call a stand-in received (chattest.Call), with the
// short accessors these tests use.
type slackCall struct{ chattest.Call }

func (c slackCall) str(name string) string               { return c.Str(name) }
func (c slackCall) blocks(t testing.TB) []map[string]any { t.Helper(); return c.Blocks(t) }

// slackStandIn is chattest's stand-in for Slack's Web API.
type slackStandIn struct{ *chattest.Slack }

func newSlackStandIn(t testing.TB, token string, channels ...string) *slackStandIn {
	return &slackStandIn{chattest.NewSlack(t, token, channels...)}
}

// next waits for the next call of method.
func (s *slackStandIn) next(t testing.TB, method string) slackCall {
	t.Helper()
	return slackCall{s.Next(t, method)}
}

// count is how many calls of method have come.
func (s *slackStandIn) count(method string) int { return s.Count(method) }

// fail answers the next calls of method with these statuses.
func (s *slackStandIn) fail(method string, statuses ...int) { s.Fail(method, statuses...) }
