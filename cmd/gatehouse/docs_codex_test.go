package main

import (
	"os"
	"strings"
	"testing"
)

// The hooks.json snippets docs/agents.md shows are the files the real Codex
// CLI test runs (testdata/codex/hooks*.json), and the bridge's command line is
// the one TestCodexAppServerBridgeRealCLI starts.
func TestDocsCodexSnippets(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hooks.json", "hooks-pretooluse.json"} {
		t.Run(name, func(t *testing.T) {
			snippet := codexFixture(t, name)
			if !strings.Contains(string(doc), "```json\n"+string(snippet)+"```\n") {
				t.Fatalf("docs/agents.md does not show testdata/codex/%s as a json block:\n%s", name, snippet)
			}
		})
	}
	t.Run("the bridge's command line", func(t *testing.T) {
		if !strings.Contains(string(doc), "gatehouse codex app-server --codex /usr/local/bin/codex -- -c model=gpt-5.5\n") {
			t.Fatal("docs/agents.md no longer shows the command line TestCodexAppServerBridgeRealCLI runs")
		}
	})
}
