// Package hookanswer is the hook formats of Claude Code and Codex: what
// Gatehouse reads of a hook input, the request or session event it makes of
// it, and the answer it prints from a settled record. The command hook (via
// client) and the server's http hook (web) both use it, so the two answer
// alike and the server needs no API client.
//
//   - claudecode.go: a PreToolUse or PermissionRequest input → the request it
//     files, its idempotency key; a record → the hook's answer or fallback.
//   - claudecode_scopes.go: the session and project options, the rules they
//     hand back, the check that a decision was made on what was filed.
//   - claudecode_session.go: Claude Code's session events → the session event
//     they report; the Stop answer that continues the session, and the reply
//     that may fill it.
//   - codex.go: Codex's permission hook input → request, record → answer.
//   - codex_session.go: Codex's session events → the session event they
//     report (the Stop answer is StopAnswer, as Claude Code's).
//   - refile.go: filing again under a chained key when a key names an earlier
//     call's settled record.
package hookanswer
