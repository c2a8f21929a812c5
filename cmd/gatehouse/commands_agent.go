//go:build agent

package main

import "strings"

// serverCommands, in the agent build, answers each of the full build's own
// commands with where to find it instead of "unknown command".
func serverCommands() []*command {
	var cmds []*command
	for _, name := range serverCommandNames {
		cmds = append(cmds, &command{name: name, elsewhere: true})
	}
	return cmds
}

var buildNote = "This is the agent build (-tags agent): " + strings.Join(serverCommandNames, ", ") + "\nare in the full build.\n"

const buildName = "agent build"
