package acp

// StdinGrace lets tests shorten the wait between closing an agent's stdin
// and SIGTERM (the fake Codex, like the real one, ignores a closed stdin).
var StdinGrace = &stdinGrace

// IDKey is how the bridge keys a JSON-RPC id (tests).
var IDKey = idKey

// EndGrace lets tests shorten how long the bridge's exit waits for its last
// session reports.
var EndGrace = &endGrace

// ReportTimeout lets tests make one session report wait longer than any
// turn may.
var ReportTimeout = &reportTimeout
