package chat_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/chat/chattest"
)

// botStandIn is chattest's stand-in for the Telegram Bot API.
type botStandIn struct{ *chattest.Telegram }

func newBotStandIn(t testing.TB, token string, chats ...string) *botStandIn {
	return &botStandIn{chattest.NewTelegram(t, token, chats...)}
}

func (b *botStandIn) next(t testing.TB, method string) slackCall {
	t.Helper()
	return slackCall{b.Next(t, method)}
}

func (b *botStandIn) count(method string) int { return b.Count(method) }

func (b *botStandIn) fail(method string, statuses ...int) { b.Fail(method, statuses...) }
