package chat

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// Store is what the chat surfaces need of the record: the requests, the
// same Decide the page calls, the message outbox, and the linked identities.
type Store interface {
	GetRequest(ctx context.Context, id string) (*models.Request, error)
	GetRuntime(ctx context.Context, id string) (*models.Runtime, error)
	OpenRequestIDs(ctx context.Context) ([]string, error)
	Decide(ctx context.Context, id string, d models.Decision) (*models.Request, error)

	EnsureChatMessage(ctx context.Context, id, dest string) error
	ClaimChatMessages(ctx context.Context, owner string, limit int, lease time.Duration) ([]store.ChatMessage, error)
	NextChatDue(ctx context.Context) (time.Time, error)
	FinishChatMessage(ctx context.Context, m *store.ChatMessage, owner string, out store.ChatSend) (bool, error)
	ChatMessageByRef(ctx context.Context, dest, channel, ref string) (*store.ChatMessage, error)

	ChatOperator(ctx context.Context, surface, workspace, user string) (models.Principal, error)
	RedeemChatLinkCode(ctx context.Context, code, surface, workspace, user string) (string, error)
	FirstChatCallback(ctx context.Context, key string) (bool, error)
}
