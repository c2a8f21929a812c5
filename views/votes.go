package views

import (
	"fmt"
	"strings"
)

// ApprovalsText is the votes line: the count of the leading option against
// the number required, then each vote, a void one said to be so.
func ApprovalsText(c Card) string {
	a := c.Approvals
	lead := map[string]int{}
	most := 0
	for _, v := range a.Votes {
		if v.Void {
			continue
		}
		lead[v.Option]++
		most = max(most, lead[v.Option])
	}
	noun := "approvals"
	if a.Required == 1 {
		noun = "approval"
	}
	s := fmt.Sprintf("%d of %d %s", most, a.Required, noun)
	if len(a.Votes) == 0 {
		return s
	}
	parts := make([]string, len(a.Votes))
	for i, v := range a.Votes {
		parts[i] = v.By + ": " + v.Option
		if v.Void {
			parts[i] += " (void: cast before an edit)"
		}
	}
	return s + " — " + strings.Join(parts, ", ")
}
