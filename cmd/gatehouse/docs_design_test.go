//go:build !agent

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDesignDocMatchesBinary holds docs/design.md's configuration table and
// command list to the binary: every flag serve's flag set defines, every
// GATEHOUSE_ variable the code reads, and every command in the command table
// is written out there, so the docs cannot drift from a new flag again.
func TestDesignDocMatchesBinary(t *testing.T) {
	b, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	config := section(t, doc, "## Configuration")

	t.Run("every serve flag is in the configuration table", func(t *testing.T) {
		for _, f := range serveFlags(t) {
			if !strings.Contains(config, "`--"+f+"`") {
				t.Errorf("docs/design.md's configuration has no `--%s`", f)
			}
		}
	})
	t.Run("every variable the code reads is in the configuration table", func(t *testing.T) {
		for _, v := range envNames(t) {
			if !strings.Contains(config, "`"+v+"`") {
				t.Errorf("docs/design.md's configuration has no `%s` (write the whole name)", v)
			}
		}
	})
	t.Run("every command is in the command list", func(t *testing.T) {
		list := config[strings.Index(config, "Commands:"):]
		for _, c := range commands() {
			if !regexp.MustCompile("`" + regexp.QuoteMeta(c.name) + "[ `|]").MatchString(list) {
				t.Errorf("docs/design.md's command list has no `%s`", c.name)
			}
			for _, sub := range c.subs {
				if !regexp.MustCompile("`" + regexp.QuoteMeta(c.name) + `[ ][a-z|-]*\b` + regexp.QuoteMeta(sub.name) + `\b`).MatchString(list) {
					t.Errorf("docs/design.md's command list has no `%s %s`", c.name, sub.name)
				}
			}
		}
	})
}

// section is a page's text from a heading to the next heading of its level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/design.md has no %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n"+heading[:strings.Index(heading, " ")+1]); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// serveFlags are the flags of serve's flag set, read from its -h.
func serveFlags(t *testing.T) []string {
	var out bytes.Buffer
	run(context.Background(), []string{"serve", "-h"}, nil, &out, &out)
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)\b`).FindAllStringSubmatch(out.String(), -1) {
		if m[1] != "h" && m[1] != "help" {
			flags = append(flags, m[1])
		}
	}
	if len(flags) < 10 {
		t.Fatalf("read %d flags from serve -h: %q", len(flags), out.String())
	}
	return flags
}

// envNames are the GATEHOUSE_ variables the shipped code reads: each
// "GATEHOUSE_…" string in a non-test Go file (test helpers' GATEHOUSE_TEST_…
// are the tests' own).
func envNames(t *testing.T) []string {
	seen := map[string]bool{}
	re := regexp.MustCompile(`"(GATEHOUSE_[A-Z0-9_]+)"`)
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != "../..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "test/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !strings.HasPrefix(m[1], "GATEHOUSE_TEST_") {
				seen[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 10 {
		t.Fatalf("found only %v", names)
	}
	return names
}
