package api

// ClaudeCodeHookInput documents the body of POST /v1/hooks/claude-code: Claude
// Code's hook input, the same JSON its command hooks read on stdin. It is an
// open object because Claude Code adds fields over time; the server reads
// session_id, transcript_path, cwd, prompt_id, hook_event_name, tool_name,
// tool_input, tool_use_id and permission_suggestions, and ignores the rest.
type ClaudeCodeHookInput map[string]any

// ClaudeCodeHookAnswer documents what POST /v1/hooks/claude-code answers with
// 200: the hook answer Claude Code reads ("hookSpecificOutput" with a PreToolUse
// permissionDecision, or a PermissionRequest decision).
type ClaudeCodeHookAnswer struct {
	HookSpecificOutput map[string]any `json:"hookSpecificOutput"`
}
