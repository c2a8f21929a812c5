//go:build agent

package main

import (
	"context"
	"fmt"
	"io"
)

// serverCommands, in the agent build, answers each of the full build's own
// commands with where to find it instead of "unknown command".
func serverCommands() map[string]command {
	cmds := map[string]command{}
	for _, name := range []string{"serve", "token", "session", "rules", "push", "audit", "chat", "away"} {
		cmds[name] = func(_ context.Context, _ []string, _ io.Reader, _, stderr io.Writer) int {
			fmt.Fprintf(stderr, "gatehouse: %q is not in this build: it was built with -tags agent, for a machine that only runs agents; build without the tag (go install ./cmd/gatehouse) for the server and its database commands\n", name)
			return 2
		}
	}
	return cmds
}

const serverUsage = ""

const buildNote = `This is the agent build (-tags agent): serve, token, session, rules, push, chat,
away and audit are in the full build.
`
