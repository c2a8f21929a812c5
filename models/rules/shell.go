package rules

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ShellLine is a command line as bash reads it: the simple commands it runs and
// the constructs that make those words alone an unsafe account of what runs.
// Rules read it for requests whose tool is a shell (ShellTool).
type ShellLine struct {
	Err      string          // why the line does not parse; "" when it does
	Commands []ShellCommand  // every simple command in source order, nested ones included
	Hazards  []string        // constructs no approve, hold or require may pass, each with where it is
	reparses int             // wrapper arguments parsed again so far (maxReparses)
	reparsed int             // and their bytes (maxReparsed)
	wrapped  map[string]bool // the texts of commands read from wrappers' arguments
}

// ShellCommand is one simple command.
type ShellCommand struct {
	// Text is its words as the shell splits them, after quote removal, joined by
	// single spaces, leading VAR=value assignments left out. A word whose value
	// is known only when the line runs ($X, $(…), a glob) is kept as written.
	Text string
	// Words are Text's words one by one, for matchers that read arguments
	// (git_push); a word known only when the line runs is kept as written.
	Words  []string
	Static bool // every word is known before the line runs
	Nested bool // inside a command or process substitution: runs for its output
	// Wrapper, when set, is the program (sudo, sh -c, eval…) that might run
	// this command: Text is read from that program's arguments, for deny only.
	Wrapper string
	Pos     string // line:column
	dynamic []bool // dynamic[i]: Words[i] is known only when the line runs; nil when none is
}

// Safe reports whether approve, hold and require may consider the line at all:
// it parsed, it runs at least one command, and nothing in it hides what runs.
func (l *ShellLine) Safe() bool { return l.Err == "" && len(l.Commands) > 0 && len(l.Hazards) == 0 }

// ShellTool reports whether a request's tool runs its command through a shell,
// so that rules read the command as a shell would.
func ShellTool(tool string) bool { return tool == "Bash" || tool == "shell" }

// maxShellDepth and maxReparses bound the re-parsing of what wrappers run
// (`sudo …`, `sh -c '…'`, eval; deny only), so `sudo sudo sudo …` stays linear.
const (
	maxShellDepth = 4
	maxReparses   = 32
	maxReparsed   = 64 * 1024
)

// ParseShell parses line as bash. It never fails: a line that does not parse
// has Err set and no commands.
func ParseShell(line string) ShellLine {
	var l ShellLine
	l.parse(line, 0, false, "")
	return l
}

func (l *ShellLine) parse(line string, depth int, nested bool, wrapper string) {
	if depth > 0 {
		if l.reparses >= maxReparses || l.reparsed+len(line) > maxReparsed {
			return
		}
		l.reparses++
		l.reparsed += len(line)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		if depth == 0 {
			l.Err = err.Error()
		}
		return
	}
	w := walker{line: l, src: line, depth: depth, nested: nested, wrapper: wrapper}
	syntax.Walk(f, w.visit)
}

type walker struct {
	line    *ShellLine
	src     string
	depth   int
	nested  bool          // the whole parse is itself inside a substitution
	wrapper string        // the program whose arguments are being parsed, if any
	stack   []syntax.Node // the nodes being visited, innermost last
	substs  int           // how many of them are substitutions
}

func (w *walker) hazard(n syntax.Node, format string, args ...any) {
	// Hazards of re-parsed bodies are implied by the wrapper that runs them.
	if w.depth == 0 {
		w.line.Hazards = append(w.line.Hazards, n.Pos().String()+": "+fmt.Sprintf(format, args...))
	}
}

// inSubst reports whether the node being visited runs inside a substitution.
func (w *walker) inSubst() bool { return w.nested || w.substs > 0 }

func isSubstNode(n syntax.Node) bool {
	switch n.(type) {
	case *syntax.CmdSubst, *syntax.ProcSubst:
		return true
	}
	return false
}

func (w *walker) visit(n syntax.Node) bool {
	if n == nil {
		if isSubstNode(w.stack[len(w.stack)-1]) {
			w.substs--
		}
		w.stack = w.stack[:len(w.stack)-1]
		return true
	}
	w.stack = append(w.stack, n)
	if isSubstNode(n) {
		w.substs++
	}
	switch n := n.(type) {
	case *syntax.Stmt:
		if n.Background || n.Coprocess || n.Disown {
			w.hazard(n, "backgrounding (&)")
		}
		for _, r := range n.Redirs {
			if why := redirectHazard(r); why != "" {
				w.hazard(r, "%s", why)
			}
		}
	case *syntax.CmdSubst:
		w.hazard(n, "command substitution")
	case *syntax.ProcSubst:
		w.hazard(n, "process substitution")
	case *syntax.FuncDecl:
		w.hazard(n, "a function definition")
	case *syntax.CallExpr:
		w.call(n)
	case *syntax.DeclClause:
		// export, declare, local, readonly, typeset change the shell itself.
		w.hazard(n, "%s", n.Variant.Value)
		w.add(n, []string{n.Variant.Value, w.source(n.Variant.End(), n.End())}, nil, false)
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause,
		*syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause, *syntax.TimeClause,
		*syntax.CoprocClause, *syntax.TestDecl:
		w.hazard(n, "a compound command (%s)", compoundName(n))
	}
	return true
}

// call records a simple command and what in it a rule cannot see through.
func (w *walker) call(c *syntax.CallExpr) {
	for _, a := range c.Assigns {
		switch {
		case len(c.Args) == 0:
			w.hazard(a, "an assignment to a shell variable")
		case a.Name == nil || a.Index != nil || a.Array != nil || a.Append:
			w.hazard(a, "an assignment the rules cannot read")
		default:
			value, known := "", true
			if a.Value != nil {
				value, known = w.word(a.Value)
			}
			if why := prefixRefused(a.Name.Value, value, known); why != "" {
				w.hazard(a, "%s", why)
			}
		}
	}
	if len(c.Args) == 0 {
		return
	}
	words := make([]string, len(c.Args))
	var dyn []bool
	static := true
	for i, a := range c.Args {
		text, ok := w.word(a)
		words[i] = text
		if !ok {
			static = false
			if dyn == nil {
				dyn = make([]bool, len(c.Args))
			}
			dyn[i] = true
			// A substitution is reported as such, with all inside it.
			if !w.inSubst() && !slices.ContainsFunc(a.Parts, isSubst) {
				w.hazard(a, "the word %s, known only when the line runs", text)
			}
		}
	}
	if static {
		if prog := path.Base(words[0]); wrappers[prog] {
			w.hazard(c, "%s as the program: it runs another command the rules cannot see", prog)
		}
	}
	w.add(c, words, dyn, static)
}

// add records one simple command; for deny, it also records what a wrapper or
// a shell would run (`sudo rm …`, `sh -c 'rm …'`, `eval 'rm …'`).
func (w *walker) add(n syntax.Node, words []string, dyn []bool, static bool) {
	nested := w.inSubst()
	text := strings.Join(words, " ")
	if w.depth > 0 {
		if w.line.wrapped[text] {
			return // already read from another tail
		}
		if w.line.wrapped == nil {
			w.line.wrapped = map[string]bool{}
		}
		w.line.wrapped[text] = true
	}
	w.line.Commands = append(w.line.Commands, ShellCommand{Text: text, Words: words, Static: static && w.depth == 0 && !nested,
		Nested: nested, Wrapper: w.wrapper, Pos: w.pos(n), dynamic: dyn})
	prog := path.Base(words[0])
	if !static || w.depth >= maxShellDepth || !wrappers[prog] {
		return
	}
	at := len(words[0]) + 1 // where words[i] starts in text
	for i := 1; i < len(words) && w.line.reparses < maxReparses; i++ {
		// Every tail is what the wrapper might run: `sudo -u root rm -rf /`
		// holds "rm -rf /". Each is parsed again, for `sudo sh -c '…'`.
		if !strings.HasPrefix(words[i], "-") {
			w.line.parse(text[at:], w.depth+1, nested, prog)
		}
		at += len(words[i]) + 1
		if i+1 < len(words) && shells[prog] && shellFlagC(words[i]) {
			w.line.parse(words[i+1], w.depth+1, nested, prog+" "+words[i])
		}
	}
}

// pos is where a node is in the line the rules were given; a command read from
// a wrapper's arguments is placed at that wrapper.
func (w *walker) pos(n syntax.Node) string {
	if w.depth > 0 {
		return ""
	}
	return n.Pos().String()
}

func isSubst(p syntax.WordPart) bool {
	switch p := p.(type) {
	case *syntax.CmdSubst, *syntax.ProcSubst:
		return true
	case *syntax.DblQuoted:
		return slices.ContainsFunc(p.Parts, isSubst)
	}
	return false
}

// shellFlagC: -c, or -c among combined single-letter flags (-ec, -lc).
func shellFlagC(s string) bool {
	return len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsRune(s, 'c')
}

// word returns a word's value after quote removal and whether the parser can
// know it: no expansion, substitution, glob, brace expansion or tilde. An
// unknown word comes back as written.
func (w *walker) word(wd *syntax.Word) (string, bool) {
	if s, ok := literal(wd); ok {
		return s, true
	}
	return w.source(wd.Pos(), wd.End()), false
}

// literal is a static word after quote removal, by the library's own
// expansion (with no environment and no file system: nothing is looked up).
func literal(wd *syntax.Word) (string, bool) {
	if !static(wd) {
		return "", false
	}
	// A Config of its own per call: with nil the library shares one whose
	// string builder races between goroutines.
	f, err := expand.Fields(&expand.Config{}, wd)
	if err != nil || len(f) != 1 {
		return "", false
	}
	return f[0], true
}

func (w *walker) source(from, to syntax.Pos) string {
	a, b := int(from.Offset()), int(to.Offset())
	if a < 0 || b > len(w.src) || a > b {
		return ""
	}
	return w.src[a:b]
}

func static(wd *syntax.Word) bool {
	for i, p := range wd.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			// Globs; a tilde at the start, or after = or : (bash expands
			// `--opt=~/x` too).
			if strings.ContainsAny(p.Value, "*?[") || (i == 0 && strings.HasPrefix(p.Value, "~")) ||
				strings.Contains(p.Value, "=~") || strings.Contains(p.Value, ":~") {
				return false
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if p.Dollar {
				return false // $"…" is translated at run time
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	// SplitBraces rewrites the word it is given: hand it a copy.
	return !syntax.SplitBraces(&syntax.Word{Parts: slices.Clone(wd.Parts)})
}

// redirectHazard says what is wrong with a redirection, or "" for one to or
// from /dev/null or between descriptors (2>&1).
func redirectHazard(r *syntax.Redirect) string {
	if r.N != nil && !digits(r.N.Value) {
		return "a redirection to a named descriptor"
	}
	target := ""
	if r.Word != nil {
		target, _ = literal(r.Word)
	}
	switch r.Op {
	case syntax.DplIn, syntax.DplOut:
		if digits(target) || target == "-" {
			return ""
		}
		return "a redirection to a file"
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrInOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		if target == "/dev/null" {
			return ""
		}
		if r.Op == syntax.RdrIn {
			return "input from a file"
		}
		return "a redirection to a file"
	case syntax.Hdoc, syntax.DashHdoc:
		return "a here-document"
	case syntax.WordHdoc:
		return "a here-string"
	}
	return "a redirection"
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func compoundName(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.IfClause:
		return "if"
	case *syntax.WhileClause:
		if n.Until {
			return "until"
		}
		return "while"
	case *syntax.ForClause:
		if n.Select {
			return "select"
		}
		return "for"
	case *syntax.CaseClause:
		return "case"
	case *syntax.ArithmCmd:
		return "((…))"
	case *syntax.TestClause:
		return "[[…]]"
	case *syntax.LetClause:
		return "let"
	case *syntax.TimeClause:
		return "time"
	case *syntax.CoprocClause:
		return "coproc"
	}
	return "@test"
}

// wrappers are programs that run another program, or shell code, named in their
// arguments: with one of them as the program, a rule's pattern would be judging
// the wrapper, not what runs. Shells are here because `bash script.sh` and
// `sh -c '…'` run code no pattern sees.
var wrappers = union(shells, setOf(
	// the shell's own ways of running code
	"eval", "exec", "source", ".", "command", "builtin", "trap", "enable", "alias", "hash", "shopt",
	// programs that run a program given as an argument
	"env", "xargs", "sudo", "doas", "su", "runuser", "pkexec", "sg", "newgrp", "nohup", "timeout",
	"nice", "ionice", "chrt", "taskset", "stdbuf", "setsid", "setpriv", "chroot", "unshare",
	"nsenter", "flock", "time", "watch", "strace", "ltrace", "script", "parallel", "systemd-run",
	"firejail", "bwrap", "unbuffer", "caffeinate", "proxychains", "proxychains4", "torsocks",
	"fakeroot", "catchsegv", "daemonize", "start-stop-daemon", "expect",
))

var shells = setOf("sh", "bash", "rbash", "zsh", "dash", "ash", "ksh", "mksh", "pdksh", "oksh", "yash", "posh",
	"fish", "csh", "tcsh", "elvish", "nu", "xonsh", "pwsh", "powershell", "busybox", "toybox")

func union(a, b map[string]bool) map[string]bool {
	for k := range b {
		a[k] = true
	}
	return a
}

// prefixRefused says why a prefix assignment NAME=value (value after quote
// removal; known: no expansion in it) keeps an approve rule, a hold or a remembered allow off the line,
// or "" when it may stand: only a name on a short allowlist, with a value
// that names no file. Every other name may change what the command runs,
// loads or reads as configuration (GOENV, GOFLAGS, RUSTC,
// CARGO_TARGET_…_LINKER, PIP_INDEX_URL, MAKEFILES, DOCKER_HOST, LD_PRELOAD,
// PATH…): those are endless, so none is listed, and such a line is no match,
// so a person decides.
func prefixRefused(name, value string, known bool) string {
	if !prefixNames[name] && !(strings.HasPrefix(name, "LC_") && len(name) > 3 && upperName(name[3:])) {
		return "an assignment to " + name + ", which is not on the allowlist (" + prefixAllowlist + ")"
	}
	if !known {
		return "an assignment to " + name + " whose value is known only when the line runs"
	}
	// A locale, a zone or a terminal named by a path reads that file as
	// configuration: only names as the system knows them (Europe/Berlin, not
	// /tmp/x or ../x).
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+-@,=", c) >= 0 ||
			c == '/' && name == "TZ" && i > 0 && value[i-1] != ':' && value[i-1] != '/') {
			return "an assignment to " + name + " whose value may name a file"
		}
	}
	if strings.Contains(value, "..") {
		return "an assignment to " + name + " whose value may name a file"
	}
	return ""
}

// prefixAllowlist is the allowlist in words, as the docs and hazards say it.
const prefixAllowlist = "LANG, LC_*, TZ, NO_COLOR, TERM, COLUMNS, CI"

// prefixNames are the names a prefix may assign and still match (LC_* aside):
// they change how a command formats its output, never what it runs.
var prefixNames = setOf("LANG", "TZ", "NO_COLOR", "TERM", "COLUMNS", "CI")

func upperName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return s != ""
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
