package views

import (
	"strconv"
	"time"
)

// Agents is the Sessions view (GET /agents): every agent session, who waits
// for the operator first, longest first.
type Agents struct {
	Page Page
	Rows []SessionRow
	Now  time.Time
}

// SessionRow is one agent session as the Sessions view shows it.
type SessionRow struct {
	Key          string // unique across owners: what the row's id is made of
	ID           string // the client's session id
	Agent        string
	Machine      string
	Cwd          string
	State        string // working, waiting, blocked, ended
	Since        time.Time
	OpenRequests int
	LastMessage  string
	WaitingID    string // the open waiting item, "" when none
}

// stateWords says a session's state to the operator.
func stateWords(state string) string {
	switch state {
	case "waiting":
		return "waits for you"
	case "blocked":
		return "blocked on a request"
	case "ended":
		return "ended"
	}
	return "working"
}

func openWordsOf(n int) string {
	if n == 1 {
		return "1 open request"
	}
	return strconv.Itoa(n) + " open requests"
}
