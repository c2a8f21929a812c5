// Package lazyregexp is a regexp compiled on first use, for package-level
// patterns: every process of the one binary runs every package's
// initialisation, and a short one (the hook) should not pay for compiling
// patterns only the server uses. Compiling `x{0,127}` builds 127 nested
// copies of x, so a handful of such patterns cost a millisecond at start.
// The same idea as the Go tree's own cmd/go/internal/lazyregexp.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled the first time it is used.
type Regexp struct {
	expr string
	re   func() *regexp.Regexp
}

// New returns the pattern expr, compiled on first use; like
// regexp.MustCompile it panics then if expr does not compile.
func New(expr string) *Regexp {
	return &Regexp{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// MatchString reports whether s contains a match of the pattern.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// String is the source text of the pattern, as regexp.Regexp's is.
func (r *Regexp) String() string { return r.expr }
