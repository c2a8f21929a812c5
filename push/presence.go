package push

// Presence says whether an operator is looking at the inbox right now (the page
// open and active). The page's websocket hub implements it.
type Presence interface {
	ActiveOperators() bool
}

// Absent is the Presence of a server without a live page: nobody is looking.
type Absent struct{}

// ActiveOperators is always false.
func (Absent) ActiveOperators() bool { return false }
