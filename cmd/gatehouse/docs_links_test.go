//go:build !agent

package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMax is the README's budget in bytes: it is the front door, and
// everything longer belongs in a topic page under docs/.
const readmeMax = 12_000

// repoRoot is the repository, seen from this package's directory.
const repoRoot = "../.."

// TestDocsLinks holds the README and docs/*.md to what a reader of a clone
// has: every relative link names a file (and heading) inside the repository,
// the README stays short, and no page speaks of how it was written (the
// development's sessions, or a contract kept outside the repository).
func TestDocsLinks(t *testing.T) {
	pages := docPages(t)
	for _, page := range pages {
		text := readPage(t, page)
		t.Run(page+" links stay inside and resolve", func(t *testing.T) {
			for _, problem := range brokenLinks(page, text) {
				t.Error(problem)
			}
			for _, problem := range sectionMentions(page, text) {
				t.Error(problem)
			}
		})
		t.Run(page+" speaks of the product, not its making", func(t *testing.T) {
			for _, hit := range historyPhrases(text) {
				t.Errorf("%s:%s", page, hit)
			}
		})
	}
	t.Run("README.md fits its budget", func(t *testing.T) {
		if n := len(readPage(t, "README.md")); n > readmeMax {
			t.Errorf("README.md is %d bytes, over %d: move the detail to a page under docs/", n, readmeMax)
		}
	})
}

// TestDocsLinksCatches feeds the checks pages they must refuse, so a check
// that quietly stopped matching fails here rather than passing everything.
func TestDocsLinksCatches(t *testing.T) {
	cases := []struct {
		name, page, text string
		links, phrases   int
	}{
		{"a link above the root", "README.md", "see [the contract](../shared/DESIGN.md)", 1, 2},
		{"a missing file", "docs/agents.md", "[gone](nowhere.md)", 1, 0},
		{"a missing heading", "README.md", "[x](docs/agents.md#no-such-heading)", 1, 0},
		{"a missing heading here", "README.md", "# Top\n[x](#bottom)", 1, 0},
		{"an absolute path", "README.md", "[x](/etc/passwd)", 1, 0},
		{"an image above the root", "docs/page.md", `<img src="../../x.png">`, 1, 0},
		{"a diary", "README.md", "faster than the last session; two sessions ago it was slow", 0, 2},
		{"a section named in prose", "docs/deploy.md", "every flag reads one (README, Configuration).", 1, 0},
		{"a section of another page in prose", "docs/agents.md", "as the README's Benchmarks section says", 1, 0},
		{"a README section that does not exist", "docs/deploy.md", "[settings](../README.md#configuration)", 1, 0},
		{"a README section that exists", "docs/deploy.md", "[run it](../README.md#run-it); a testdata README", 0, 0},
		{"good links and the hook's label", "docs/agents.md",
			"# Agents\n[up](../README.md#gatehouse) [here](#agents) [web](https://example.com) `[not](a-link.md)`\n" +
				"| `session` | Allow for this session |\n```\n[not](a-link-either.md)\n```\n", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := append(brokenLinks(c.page, c.text), sectionMentions(c.page, c.text)...); len(got) != c.links {
				t.Errorf("brokenLinks = %q, want %d", got, c.links)
			}
			if got := historyPhrases(c.text); len(got) != c.phrases {
				t.Errorf("historyPhrases = %q, want %d", got, c.phrases)
			}
		})
	}
}

// docPages is README.md and every docs/*.md, relative to the root.
func docPages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md under %s: %v", repoRoot, err)
	}
	pages := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(repoRoot, d)
		pages = append(pages, filepath.ToSlash(rel))
	}
	return pages
}

func readPage(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	fence      = regexp.MustCompile("(?ms)^ {0,3}```.*?^ {0,3}```[ \t]*$|^ {0,3}~~~.*?^ {0,3}~~~[ \t]*$")
	codeSpan   = regexp.MustCompile("`+[^`\n]*`+")
	mdLink     = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	htmlLink   = regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	heading    = regexp.MustCompile(`(?m)^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\s+(?:id|name)\s*=\s*"([^"]+)"`)
)

// linkTargets are the targets of a page's links, images and reference
// definitions, leaving out code, where a bracket is text.
func linkTargets(text string) []string {
	text = fence.ReplaceAllString(text, "")
	text = codeSpan.ReplaceAllString(text, "")
	var out []string
	for _, re := range []*regexp.Regexp{mdLink, refLink, htmlLink} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// brokenLinks checks each relative target of page (a path from the root)
// against the repository on disk: inside the root, present, and, when it
// names a heading of a Markdown page, a heading that page has.
func brokenLinks(page, text string) []string {
	var problems []string
	for _, target := range linkTargets(text) {
		if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
			continue // a web address, not a file of the clone
		}
		file, anchor, _ := strings.Cut(target, "#")
		if strings.HasPrefix(file, "/") {
			problems = append(problems, page+": "+target+": write a link relative to the page, not an absolute path")
			continue
		}
		path := page // a bare #anchor points into the page itself
		if file != "" {
			path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
		}
		if path == ".." || strings.HasPrefix(path, "../") {
			problems = append(problems, page+": "+target+": leaves the repository")
			continue
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, path))
		if err != nil {
			if st, serr := os.Stat(filepath.Join(repoRoot, path)); serr == nil && st.IsDir() && anchor == "" {
				continue // a folder of the repository
			}
			problems = append(problems, page+": "+target+": no such file in the repository")
			continue
		}
		if anchor == "" || !strings.HasSuffix(path, ".md") {
			continue
		}
		body := string(b)
		if path == page {
			body = text
		}
		if !headingIDs(body)[strings.ToLower(anchor)] {
			problems = append(problems, page+": "+target+": "+path+" has no heading #"+anchor)
		}
	}
	return problems
}

// sectionRef is a section of a page named in prose ("README, Configuration",
// "the README's Benchmarks section"): a reader cannot follow it, and nothing
// checks that the section exists. Write a link with its anchor instead.
var sectionRef = regexp.MustCompile(`\b([A-Za-z-]+\.md|README)(?:, |'s |’s )([A-Z][A-Za-z]+)`)

// sectionMentions are the prose references to a page's section in text.
func sectionMentions(page, text string) []string {
	text = fence.ReplaceAllString(text, "")
	text = codeSpan.ReplaceAllString(text, "")
	var problems []string
	for _, m := range sectionRef.FindAllStringSubmatch(text, -1) {
		problems = append(problems, page+": "+m[0]+": link to the section, e.g. [README](../README.md#"+strings.ToLower(m[2])+")")
	}
	return problems
}

// headingIDs are the anchors GitHub gives a page's headings (lower case,
// punctuation dropped, spaces to hyphens, repeats numbered) and its explicit
// <a id> anchors.
func headingIDs(text string) map[string]bool {
	ids := map[string]bool{}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		ids[strings.ToLower(m[1])] = true
	}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			seen[id]++
			id += "-" + strconv.Itoa(n)
		} else {
			seen[id] = 1
		}
		ids[id] = true
	}
	return ids
}

// history finds talk of the development (sessions, a path to files kept
// beside the repository) rather than of the product. DESIGN.md is matched in
// capitals: it names the outside contract, while docs/design.md is a page here.
var history = regexp.MustCompile(`(?i:this session|last session|sessions? ago|\.\./shared)|DESIGN\.md`)

// productText is wording of the product that the phrases above would take for
// history: the option label the Claude Code hook and the Codex bridge show
// (hookanswer/claudecode_scopes.go, codexbridge), which the docs quote.
var productText = []string{"Allow for this session"}

// historyPhrases are "line: phrase" for each match in text.
func historyPhrases(text string) []string {
	var hits []string
	for i, line := range strings.Split(text, "\n") {
		for _, p := range productText {
			line = strings.ReplaceAll(line, p, "")
		}
		for _, m := range history.FindAllString(line, -1) {
			hits = append(hits, strconv.Itoa(i+1)+": "+m)
		}
	}
	return hits
}
