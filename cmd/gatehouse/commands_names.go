package main

// serverCommandNames are the full build's commands that the agent build
// leaves out (commands_server.go); a test holds the two lists equal.
var serverCommandNames = []string{"serve", "token", "session", "away", "remembered", "rules", "push", "chat", "reviewer", "audit"}
