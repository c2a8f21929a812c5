package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"strings"
)

// flagSet is a command's flags: the standard flag package's, with the
// command's usage from the table on -h, one prefixed line for a mistake, and
// secrets read from the environment only after parsing, so that no default
// shown anywhere holds one.
type flagSet struct {
	*flag.FlagSet
	path           string // "token create"
	stdout, stderr io.Writer
	hidden         map[string]bool
	after          []func()
}

// newFlags makes the flags of the command at path, as the table names it.
func newFlags(path string, stdout, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet("gatehouse "+path, flag.ContinueOnError)
	// The flag package's own output (its usage, its error line) is replaced
	// by parse's.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, path: path, stdout: stdout, stderr: stderr, hidden: map[string]bool{}}
}

// secret defines a string flag whose default is the environment variable's
// value: read after parsing, and shown in the help as $VAR, never its value.
func (f *flagSet) secret(name, envVar, usage string) *string {
	p := f.String(name, "", usage+" (default $"+envVar+")")
	f.after = append(f.after, func() {
		if !f.given(name) {
			*p = os.Getenv(envVar)
		}
	})
	return p
}

// hide keeps a flag out of the help (a flag for tests and demonstrations).
func (f *flagSet) hide(name string) { f.hidden[name] = true }

// given reports whether the flag was set on the command line.
func (f *flagSet) given(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// parse reads the flags in args. -h or --help prints the command's usage on
// stdout and returns flag.ErrHelp; a mistake is reported on stderr and
// returned: exitCode turns either into the command's exit code.
func (f *flagSet) parse(args []string) error {
	err := f.FlagSet.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		f.printUsage(f.stdout)
		return err
	case err != nil:
		err = explainValue(f.FlagSet, err)
		f.report(err)
		return err
	}
	for _, fill := range f.after {
		fill()
	}
	return nil
}

// usageError reports a mistake in the command line and returns code, the
// command's exit code for one.
func (f *flagSet) usageError(code int, format string, a ...any) int {
	f.report(fmt.Errorf(format, a...))
	return code
}

// report prints a usage mistake, prefixed once with the command.
func (f *flagSet) report(err error) {
	fmt.Fprintf(f.stderr, "gatehouse %s: %v\nRun \"gatehouse %s -h\" for usage.\n", f.path, err, f.path)
}

// exitCode is a command's exit code after parse returned err: 0 after the
// help, else code.
func exitCode(err error, code int) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return code
}

// printUsage writes the command's synopsis, what it does and its flags.
func (f *flagSet) printUsage(w io.Writer) {
	c := lookup(f.path)
	if c == nil { // a flag set named unlike its command: usage without the table's words
		c = &command{}
	}
	fmt.Fprintf(w, "Usage: %s\n", synopsis(f.path, c))
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", c.help)
	}
	var b strings.Builder
	f.VisitAll(func(fl *flag.Flag) {
		if f.hidden[fl.Name] {
			return
		}
		arg, usage := flag.UnquoteUsage(fl)
		fmt.Fprintf(&b, "  --%s", fl.Name)
		if arg != "" {
			fmt.Fprintf(&b, " %s", arg)
		}
		b.WriteString("\n        " + strings.ReplaceAll(usage, "\n", "\n        "))
		if d := shownDefault(fl); d != "" && !strings.Contains(usage, "(default") {
			fmt.Fprintf(&b, " (default %s)", d)
		}
		b.WriteString("\n")
	})
	if b.Len() > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s", b.String())
	}
}

// shownDefault is the flag's default as the help shows it: empty for a zero
// value, a URL's password redacted.
func shownDefault(fl *flag.Flag) string {
	if isZeroValue(fl) {
		return ""
	}
	if _, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok {
		return fl.DefValue
	}
	if g, ok := fl.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); !isString {
			return fl.DefValue
		}
	}
	return fmt.Sprintf("%q", redactPassword(fl.DefValue))
}

// isZeroValue reports whether the flag's default is its type's zero value,
// as flag.PrintDefaults decides it.
func isZeroValue(fl *flag.Flag) bool {
	t := reflect.TypeOf(fl.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	if v, ok := z.Interface().(flag.Value); ok && z.IsValid() {
		return fl.DefValue == v.String()
	}
	return fl.DefValue == ""
}

// redactPassword hides the password of a URL (a database's, a server's).
func redactPassword(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}
