package rules_test

import (
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/models/rules"
)

// TestParseShellConcurrently: pages, filings and replicas read commands at
// once, so the reader shares nothing between calls (under -race, the
// library's shared default expansion config was a data race).
func TestParseShellConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				l := rules.ParseShell(`git commit -m "fix ` + string(rune('a'+i)) + `" && 'npm' test`)
				if len(l.Commands) != 2 || !l.Safe() {
					t.Errorf("parsed %+v", l.Commands)
					return
				}
			}
		}()
	}
	wg.Wait()
}
