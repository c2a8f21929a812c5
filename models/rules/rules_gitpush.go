package rules

import (
	"path"
	"slices"
	"strings"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

// GitPush is a rule's git_push condition: the request's command is a
// `git [global options] push [options] [remote] [refspecs]` that updates one
// of Branches. Restrictions (deny, require) match a push that *may* update one
// (a push whose destinations cannot be read from its words counts), approve
// and hold only one that updates nothing else.
type GitPush struct {
	Branches []string
}

// gitPushRead is what the words of a simple command say about a git push.
type gitPushRead struct {
	push    bool     // the command is, or may be, a git push
	unknown bool     // what it updates cannot be read from its words
	deletes bool     // it deletes a ref
	dsts    []string // the refs it updates as written (refs/heads/x, heads/x, x)
}

// mayUpdate: the safe side of a restriction; a push whose destinations
// cannot be read may update any branch. Names compare ignoring case, as refs
// do on a case-insensitive file system.
func (g *GitPush) mayUpdate(p gitPushRead) bool {
	if !p.push {
		return false
	}
	if p.unknown {
		return true
	}
	for _, d := range p.dsts {
		for _, b := range branchCandidates(d) {
			if slices.ContainsFunc(g.Branches, func(x string) bool { return strings.EqualFold(x, b) }) {
				return true
			}
		}
	}
	return false
}

// onlyUpdates: the safe side of a permission; every ref the push updates is
// known and is one of the branches, and it deletes none.
func (g *GitPush) onlyUpdates(p gitPushRead) bool {
	if !p.push || p.unknown || p.deletes || len(p.dsts) == 0 {
		return false
	}
	for _, d := range p.dsts {
		c := branchCandidates(d)
		if len(c) == 0 {
			return false
		}
		for _, b := range c {
			if !slices.Contains(g.Branches, b) {
				return false
			}
		}
	}
	return true
}

// branchCandidates are the branches a destination as written may name: the
// remote resolves `x` as refs/heads/x (or another ref), `heads/x` as
// refs/heads/x or refs/heads/heads/x; refs/tags/… names no branch.
func branchCandidates(dst string) []string {
	if b, ok := strings.CutPrefix(dst, "refs/heads/"); ok {
		return []string{b}
	}
	if strings.HasPrefix(dst, "refs/") {
		return nil
	}
	if b, ok := strings.CutPrefix(dst, "heads/"); ok {
		return []string{b, dst}
	}
	return []string{dst}
}

// readGitPush reads a simple command's words (dyn[i]: word i is known only
// when the line runs; nil when all are known).
func readGitPush(words []string, dyn []bool) gitPushRead {
	unknownAt := func(i int) bool { return dyn != nil && dyn[i] }
	if len(words) < 2 || unknownAt(0) || path.Base(words[0]) != "git" {
		return gitPushRead{}
	}
	var aliases []string // commands the line itself defines as aliases (-c alias.x=…)
	risky := false       // -c set configuration that decides what a push updates
	for i := 1; i < len(words); i++ {
		w := words[i]
		if unknownAt(i) {
			// The command is known only when the line runs: it may be a push.
			return gitPushRead{push: true, unknown: true}
		}
		if !strings.HasPrefix(w, "-") {
			switch {
			case strings.EqualFold(w, "push"):
				p := readPushArgs(words[i+1:], dyn, i+1)
				p.unknown = p.unknown || risky
				return p
			case slices.ContainsFunc(aliases, func(a string) bool { return strings.EqualFold(a, w) }):
				return gitPushRead{push: true, unknown: true}
			}
			return gitPushRead{}
		}
		name, value, attached := strings.Cut(w, "=")
		switch {
		case gitValueOptions[w]:
			if i+1 < len(words) {
				i++
				value = words[i]
			}
		case attached && gitValueOptions[name]:
		case gitFlagOptions[name]:
			continue
		default:
			// Git refuses an option it does not know; one it learns later
			// might take a value. Either way, a push in what follows counts.
			if slices.ContainsFunc(words[i+1:], func(a string) bool { return strings.EqualFold(a, "push") }) {
				return gitPushRead{push: true, unknown: true}
			}
			return gitPushRead{}
		}
		if name == "-c" || name == "--config-env" {
			key, _, _ := strings.Cut(value, "=")
			key = strings.ToLower(key)
			if a, ok := strings.CutPrefix(key, "alias."); ok {
				aliases = append(aliases, a)
			}
			for _, p := range []string{"remote.", "push.", "branch.", "include"} {
				risky = risky || strings.HasPrefix(key, p)
			}
		}
	}
	return gitPushRead{}
}

// Options git takes before the command: those with a value (-C dir, also
// --git-dir=dir) and flags.
var (
	gitValueOptions = setOf("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--attr-source")
	gitFlagOptions  = setOf("-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--bare", "--literal-pathspecs",
		"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice",
		"--exec-path", "--html-path", "--man-path", "--info-path", "--list-cmds", "-v", "--version", "-h", "--help")
)

// pushOption is how `git push` reads one of its long options.
type pushOption int

const (
	pushFlag     pushOption = iota // no value
	pushOptional                   // a value only as --opt=value
	pushValue                      // a value, as --opt=value or --opt value
	pushAll                        // pushes refs the command does not name (--all, --mirror, --prune)
	pushDelete                     // the refspecs name refs to delete
	pushTags                       // adds refs/tags/*
)

var pushOptions = map[string]pushOption{
	"all": pushAll, "branches": pushAll, "mirror": pushAll, "prune": pushAll, "delete": pushDelete, "tags": pushTags,
	"follow-tags": pushFlag, "dry-run": pushFlag, "porcelain": pushFlag, "force": pushFlag, "force-if-includes": pushFlag,
	"atomic": pushFlag, "verify": pushFlag, "set-upstream": pushFlag, "thin": pushFlag, "quiet": pushFlag,
	"verbose": pushFlag, "progress": pushFlag, "ipv4": pushFlag, "ipv6": pushFlag,
	"force-with-lease": pushOptional, "signed": pushOptional,
	"repo": pushValue, "receive-pack": pushValue, "exec": pushValue, "push-option": pushValue, "recurse-submodules": pushValue,
}

// pushShort is `git push`'s single-letter options; 'o' takes a value.
var pushShort = map[byte]pushOption{'n': pushFlag, 'f': pushFlag, 'u': pushFlag, 'q': pushFlag, 'v': pushFlag,
	'4': pushFlag, '6': pushFlag, 'd': pushDelete, 'o': pushValue}

// lookupPushOption resolves a long option as git's option parser does: the
// exact name, or the one option it abbreviates; --no-x negates x.
func lookupPushOption(name string) (pushOption, bool) {
	if k, ok := pushOptions[name]; ok {
		return k, true
	}
	neg := false
	if n, ok := strings.CutPrefix(name, "no-"); ok && n != "" {
		name, neg = n, true
	}
	found, n := pushFlag, 0
	for full, k := range pushOptions {
		if strings.HasPrefix(full, name) {
			found, n = k, n+1
		}
	}
	if n != 1 {
		return 0, false // unknown or ambiguous: git refuses it
	}
	if neg {
		return pushFlag, true
	}
	return found, true
}

// readPushArgs reads the words after `push`; off is where they start in the
// command's words (for dyn).
func readPushArgs(args []string, dyn []bool, off int) gitPushRead {
	p := gitPushRead{push: true}
	var positional []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn != nil && dyn[off+i] {
			// $X may be --all, or several refspecs.
			p.unknown = true
			continue
		}
		if dashdash || a == "-" || !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
			continue
		}
		if a == "--" {
			dashdash = true
			continue
		}
		var kinds []pushOption
		takesNext := false
		if long, ok := strings.CutPrefix(a, "--"); ok {
			name, _, attached := strings.Cut(long, "=")
			k, ok := lookupPushOption(name)
			if !ok {
				p.unknown = true
				continue
			}
			kinds = append(kinds, k)
			takesNext = k == pushValue && !attached
		} else {
			for j := 1; j < len(a); j++ {
				k, ok := pushShort[a[j]]
				if !ok {
					p.unknown = true
					break
				}
				kinds = append(kinds, k)
				if k == pushValue {
					takesNext = j == len(a)-1 // -ovalue carries its value
					break
				}
			}
		}
		if takesNext && i+1 < len(args) {
			i++
			if dyn != nil && dyn[off+i] {
				p.unknown = true // a split $X may leave words that are refspecs
			}
		}
		for _, k := range kinds {
			switch k {
			case pushAll:
				p.unknown = true
			case pushDelete:
				p.deletes = true
			case pushTags:
				p.dsts = append(p.dsts, "refs/tags/*")
			}
		}
	}
	if len(positional) <= 1 && len(p.dsts) == 0 {
		// No refspec: the current branch, or what the configuration says.
		p.unknown = true
	}
	if len(positional) > 1 {
		p.readRefspecs(positional[1:])
	}
	return p
}

// readRefspecs reads [+]src[:dst], :dst, `tag NAME` and ^negative refspecs.
func (p *gitPushRead) readRefspecs(specs []string) {
	for i := 0; i < len(specs); i++ {
		s := specs[i]
		if s == "tag" && i+1 < len(specs) {
			i++
			p.dsts = append(p.dsts, "refs/tags/"+specs[i])
			continue
		}
		if strings.HasPrefix(s, "^") {
			continue // a negative refspec excludes refs; it updates none
		}
		s = strings.TrimPrefix(s, "+")
		src, dst, colon := strings.Cut(s, ":")
		switch {
		case !colon:
			dst = src
		case src == "":
			p.deletes = true
		}
		if dst == "" || dst == "HEAD" || dst == "@" || strings.ContainsAny(dst, "*") {
			// `:` pushes the matching branches, HEAD the current one, a
			// pattern any branch it matches.
			p.unknown = true
			continue
		}
		p.dsts = append(p.dsts, dst)
	}
}

// matchesGitPush tests the git_push condition against one simple command.
func (ru *rule) matchesGitPush(c ShellCommand, restrict bool) bool {
	if ru.GitPush == nil {
		return true
	}
	p := readGitPush(c.Words, c.dynamic)
	if restrict {
		return ru.GitPush.mayUpdate(p)
	}
	return ru.GitPush.onlyUpdates(p)
}

// gitPushUnparsed is the safe side for a line that does not parse, which a
// restriction must still catch (`git push origin main 'oops`): its
// blank-separated words, quotes dropped, from each `git` on.
func (g *GitPush) gitPushUnparsed(raw string) bool {
	words := strings.Fields(strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(raw))
	dyn := make([]bool, len(words))
	for i, w := range words {
		dyn[i] = strings.ContainsAny(w, "$`*?[{~;&|()<>")
	}
	for i, w := range words {
		if path.Base(w) == "git" && g.mayUpdate(readGitPush(words[i:], dyn[i:])) {
			return true
		}
	}
	return false
}

type gitPushSpec struct {
	Branches any `yaml:"branches"`
}

// branchNamePattern: a branch as git_push names it, without refs/heads/.
var branchNamePattern = lazyregexp.New(`^[A-Za-z0-9_][A-Za-z0-9._/-]*$`)

// gitPush compiles a git_push condition.
func (c *compiler) gitPush(path string, s *gitPushSpec) *GitPush {
	if s == nil {
		return nil
	}
	if s.Branches == nil {
		c.fail(path, "git_push needs branches (e.g. git_push: {branches: [main]})")
		return nil
	}
	branches := c.list(path+".branches", s.Branches, nil, "")
	for i, b := range branches {
		b = strings.TrimPrefix(b, "refs/heads/")
		if !branchNamePattern.MatchString(b) || strings.Contains(b, "..") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".lock") {
			c.fail(path+".branches", "%q is not a branch name (letters, digits and ._/-, no .., as main or release/1.2)", branches[i])
			return nil
		}
		branches[i] = b
	}
	if branches == nil {
		return nil
	}
	return &GitPush{Branches: branches}
}
