// Package deploy holds no code: it is the home of the files that run
// Gatehouse as a service (systemd/gatehouse.service, its system user and its
// settings), and of the test that keeps them valid. slack/manifest.yaml is
// the Slack app that chat destinations post through (docs/chat.md; the chat
// package's tests check it).
//
// They exist because the server's OS user owns the database, and whoever owns
// the database can mint an operator token: an agent running as that user can
// approve itself, and nothing inside Gatehouse can stop it. The unit runs the
// server as its own user with a 0700 data directory, so an agent's user
// reaches Gatehouse only over HTTP with an agent token (docs/deploy.md,
// docs/threat-model.md).
package deploy
