// Package chat is Gatehouse's chat surfaces: Slack and Telegram as places an
// operator sees requests and decides them. It posts each request a route
// sends to a channel, edits that message whenever the request changes
// (a vote, a decision anywhere, expiry), and takes clicks, notes, answers
// and link codes from the chats as decisions by the operator the chat
// identity is linked to, through the store's Decide like the page.
//
// Files by job:
//
//   - config.go, route.go: the chat file (apps, destinations, routes, detail
//     modes; secrets named by environment variable) and which requests go
//     where.
//   - service.go: Service, its start-up check and its HTTP handler.
//   - outbox.go, surface.go: the worker that drives the durable outbox
//     (models/store's ChatMessage rows) from the store's change
//     announcements, and the retry classification of a failed send.
//   - view.go: one request as a message shows it, for every surface.
//   - decide.go: a chat click as a decision or a vote by a linked operator.
//   - slack.go, slack_blocks.go, slack_http.go: Slack's Web API through
//     slack-go, Block Kit, and the signed interactivity and slash-command
//     endpoints.
//   - telegram.go, telegram_text.go, telegram_http.go: the Bot API through
//     go-telegram/bot, the text and inline keyboard, and the webhook.
//
// Slack and Telegram are files of one package rather than subpackages: they
// share the outbox, the view and the decide path unexported, and each is a
// few hundred lines.
package chat
