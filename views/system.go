package views

import (
	"strconv"
	"time"
)

// System is GET /system: what is wired into the server, read-only. A nil
// section is one the server has no source for; it is left out.
type System struct {
	Page     Page
	Runtimes *RuntimeList
	Devices  *DeviceList
	Rules    *RuleList
	Now      time.Time
	// Away is the viewing operator's availability; nil when the server keeps none.
	Away *AwayView
	// Reviews is what the advisory reviewer spent per day; nil when it never ran.
	Reviews *ReviewUsage
}

// ReviewUsage is the advisory reviewer's spending, newest day first.
type ReviewUsage struct{ Days []ReviewDayRow }

// ReviewDayRow is one UTC day of reviews.
type ReviewDayRow struct {
	Day                 string
	Reviews, NoOpinion  int64
	TokensIn, TokensOut int64
}

// PerReview is the day's tokens per review, in and out together.
func (d ReviewDayRow) PerReview() int64 {
	if d.Reviews == 0 {
		return 0
	}
	return (d.TokensIn + d.TokensOut) / d.Reviews
}

// AwayView is an operator's availability as the system page shows it.
type AwayView struct {
	Away  bool
	Until time.Time // zero: until turned off
	Quiet string    // "22:00–07:00 Europe/Berlin"; "" when none
}

func awayText(a AwayView) string {
	if a.Until.IsZero() {
		return "You are away: your devices get no push until you come back."
	}
	return "You are away until " + a.Until.UTC().Format("2006-01-02 15:04") + " UTC: your devices get no push until then."
}

// RuntimeList is every registered runtime.
type RuntimeList struct {
	Rows []RuntimeRow
	Now  time.Time
}

// RuntimeRow is one runtime and its forwarding health.
type RuntimeRow struct {
	ID           string
	Name         string
	Machine      string
	CallbackURL  string // "" when the runtime pulls its decisions
	LastSeenAt   time.Time
	LastResult   string    // of the last delivery; "" when none yet
	LastResultAt time.Time // zero when none yet
	Failures     int       // failed deliveries in a row
	Pending      int64     // forwards not yet delivered
}

// DeviceList is every push device, retired ones included.
type DeviceList struct {
	Rows []DeviceRow
	Now  time.Time
}

// DeviceRow is one push device. It never holds the token or endpoint, only
// its last few characters.
type DeviceRow struct {
	ID         string
	Kind       string // apns, webpush
	Name       string
	Operator   string
	TokenTail  string // e.g. "…3f9a0c21"
	CreatedAt  time.Time
	LastResult string
	LastAt     time.Time // zero when never pushed to
	Retired    bool
}

// RuleList is the rules file in force; Loaded is false when there is none.
type RuleList struct {
	Loaded   bool
	File     string
	Digest   string
	LoadedAt time.Time
	Rules    []RuleRow
}

// RuleRow is one rule as written.
type RuleRow struct {
	Name    string
	Line    int
	Action  string
	Window  string // hold only, e.g. "1m30s"
	Then    string // hold only
	Summary string // the rule in one line
}

// kindName says a device kind the way the operator knows it.
func kindName(kind string) string {
	switch kind {
	case "apns":
		return "APNs"
	case "webpush":
		return "Web Push"
	}
	return kind
}

// ago says how long ago t was, or "never" for the zero time.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return Span(now.Sub(t)) + " ago"
}

// delivery says the last forwarding result of a runtime.
func delivery(r RuntimeRow, now time.Time) string {
	if r.LastResult == "" {
		return "none yet"
	}
	return r.LastResult + ", " + ago(r.LastResultAt, now)
}

// windowThen says what a hold rule does when its window ends.
func windowThen(r RuleRow) string {
	switch {
	case r.Window != "" && r.Then != "":
		return r.Window + " then " + r.Then
	case r.Window != "":
		return r.Window
	}
	return r.Then
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

func itoa(n int) string { return strconv.Itoa(n) }
