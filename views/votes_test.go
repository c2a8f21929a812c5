package views_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/views"
)

func TestApprovalsText(t *testing.T) {
	c := views.Card{Approvals: &views.Approvals{Required: 2, Votes: []views.Vote{
		{By: "bob", Option: "Allow once", Void: true}, {By: "dave", Option: "Allow once"},
	}}}
	t.Run("a vote cast before an edit is shown void and not counted", func(t *testing.T) {
		want := "1 of 2 approvals — bob: Allow once (void: cast before an edit), dave: Allow once"
		if got := views.ApprovalsText(c); got != want {
			t.Fatalf("got %q\nwant %q", got, want)
		}
	})
}
