package acp

// StdinGrace lets tests shorten the wait between closing an agent's stdin
// and SIGTERM (the fake Codex, like the real one, ignores a closed stdin).
var StdinGrace = &stdinGrace

// IDKey is how the bridge keys a JSON-RPC id (tests).
var IDKey = idKey
