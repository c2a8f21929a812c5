package models

import (
	"strings"
	"time"
	_ "time/tzdata" // quiet hours read any IANA zone, on a host without a zone database too
)

// Availability is an operator's own say over being reached: away (no push,
// and a request whose every eligible approver is away escalates at once) and
// quiet hours (no push during them). Keyed by operator name; only the
// operator sets it.
type Availability struct {
	Operator  string     `gorm:"primaryKey;size:100"`
	Away      bool       `gorm:"not null;default:false"`
	AwayUntil *time.Time // nil: until turned off
	QuietHours
	UpdatedAt time.Time
}

// QuietHours is a daily span in an IANA time zone, "22:00"–"07:00" crossing
// midnight when Start is after End. Empty Start: none.
type QuietHours struct {
	QuietStart string `gorm:"size:5"`
	QuietEnd   string `gorm:"size:5"`
	QuietTZ    string `gorm:"size:64"`
}

// AwayAt reports whether the operator is away at t.
func (a *Availability) AwayAt(t time.Time) bool {
	return a != nil && a.Away && (a.AwayUntil == nil || t.Before(*a.AwayUntil))
}

// QuietAt reports whether t falls in the operator's quiet hours, read on the
// clock of their time zone (so a daylight-saving change moves them with it).
func (a *Availability) QuietAt(t time.Time) bool {
	if a == nil || a.QuietStart == "" {
		return false
	}
	loc, err := time.LoadLocation(a.QuietTZ)
	if err != nil {
		return false // validated when set; a zone the system lost quiets nothing
	}
	start, _ := clockMinutes(a.QuietStart)
	end, _ := clockMinutes(a.QuietEnd)
	lt := t.In(loc)
	now := lt.Hour()*60 + lt.Minute()
	if start < end {
		return now >= start && now < end
	}
	return now >= start || now < end // across midnight
}

// Validate checks quiet hours as an operator sets them.
func (q QuietHours) Validate() error {
	start, ok := clockMinutes(q.QuietStart)
	if !ok {
		return Errorf(ECodeInvalid, "start %q must be a time of day like 22:00", q.QuietStart)
	}
	end, ok := clockMinutes(q.QuietEnd)
	if !ok {
		return Errorf(ECodeInvalid, "end %q must be a time of day like 07:00", q.QuietEnd)
	}
	if start == end {
		return Errorf(ECodeInvalid, "start and end are the same time: quiet hours need a span (use away for all day)")
	}
	if q.QuietTZ == "" || strings.EqualFold(q.QuietTZ, "local") {
		return Errorf(ECodeInvalid, "tz must name an IANA time zone, e.g. Europe/Berlin")
	}
	if _, err := time.LoadLocation(q.QuietTZ); err != nil {
		return Errorf(ECodeInvalid, "tz %q is not an IANA time zone this server knows", q.QuietTZ)
	}
	return nil
}

// clockMinutes reads "HH:MM" (24-hour) as minutes after midnight.
func clockMinutes(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}
