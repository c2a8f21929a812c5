//go:build race

package rules_test

// raceEnabled: built with -race.
const raceEnabled = true
