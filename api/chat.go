package api

import "time"

// ChatLinkCode answers POST /v1/chat/link-codes: a one-time code the
// operator sends from a chat (`/gatehouse link CODE` in Slack) to link that
// chat identity to themselves.
type ChatLinkCode struct {
	Code      string    `json:"code"`
	Operator  string    `json:"operator"`
	ExpiresAt time.Time `json:"expires_at"`
}
