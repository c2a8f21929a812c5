package main

import (
	"errors"
	"flag"
	"regexp"
	"strings"
	"time"
)

// badValue is how the flag package reports a value its number and duration
// flags cannot read: "parse error", with no word of the form they want.
var badValue = regexp.MustCompile(`invalid value "[^"]*" for flag -([^:]+): parse error`)

// explainValue rewrites the flag package's "parse error" for a bad number or
// duration into the form it wants ("want a duration, a number with a unit: …").
func explainValue(fs *flag.FlagSet, err error) error {
	m := badValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if want := wantedForm(fs.Lookup(m[1])); want != "" {
		return errors.New(strings.Replace(err.Error(), "parse error", want, 1))
	}
	return err
}

// wantedForm says what a flag's value must look like, or "" when the flag
// package's own message is enough.
func wantedForm(f *flag.Flag) string {
	if f == nil {
		return ""
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration, a number with a unit: 90s, 15m, 1h, 168h"
	case int, int64, uint, uint64:
		return "want a whole number, e.g. 100"
	case float64:
		return "want a number, e.g. 10 or 0.5"
	}
	return ""
}
