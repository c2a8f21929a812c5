package models

import (
	"net/url"
	"strings"
	"time"
)

// Runtime is a registered machine-local runtime: the process that holds an
// agent's live callback and acts on decisions. OwnerID is the runtime token that
// registered it; (OwnerID, Name) is unique, so re-registering updates it.
type Runtime struct {
	ID          string `gorm:"primaryKey;size:40"`
	OwnerID     string `gorm:"size:40;not null;uniqueIndex:idx_runtimes_owner_name,priority:1"`
	Name        string `gorm:"size:100;not null;uniqueIndex:idx_runtimes_owner_name,priority:2"`
	Machine     string `gorm:"size:200;not null"`
	CallbackURL string `gorm:"size:2000;not null;default:''"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
	LastSeenAt  time.Time
	// Seq numbers this runtime's decisions for its pull feed. It is raised under
	// the row lock inside each decision's transaction, so sequence order is commit
	// order and a reader that resumes after N never misses a smaller number.
	Seq int64 `gorm:"not null;default:0"`
	// Forwarding health: the last send's outcome and how many failed in a row.
	LastResult   string `gorm:"size:200;not null;default:''"`
	LastResultAt *time.Time
	Failures     int `gorm:"not null;default:0"`
}

// RuntimeInput is what a runtime registers.
type RuntimeInput struct {
	Name        string
	Machine     string
	CallbackURL string
}

// Validate checks a registration; it never touches the store.
func (in *RuntimeInput) Validate() error {
	in.Name, in.Machine, in.CallbackURL = strings.TrimSpace(in.Name), strings.TrimSpace(in.Machine), strings.TrimSpace(in.CallbackURL)
	if in.Name == "" || len(in.Name) > 100 {
		return Errorf(ECodeInvalid, "name is required: 1 to 100 bytes")
	}
	if in.Machine == "" || len(in.Machine) > 200 {
		return Errorf(ECodeInvalid, "machine is required: 1 to 200 bytes")
	}
	if in.CallbackURL == "" {
		return nil
	}
	u, err := url.Parse(in.CallbackURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(in.CallbackURL) > 2000 {
		return Errorf(ECodeInvalid, "callback_url must be an absolute http or https URL (the server POSTs {callback_url}/v1/permissions/decide)")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Errorf(ECodeInvalid, "callback_url may not carry a query or fragment")
	}
	in.CallbackURL = strings.TrimRight(in.CallbackURL, "/")
	return nil
}

// RuntimeStatus is a runtime with the number of its forwards still pending.
type RuntimeStatus struct {
	Runtime
	Pending int64
}
