package models

// ValidateReason checks the reason a filer gives for withdrawing its request:
// the length and text of a note.
func ValidateReason(reason string) error {
	if len(reason) > MaxNote {
		return Errorf(ECodeInvalid, "reason is longer than %d bytes", MaxNote)
	}
	return checkText("reason", reason, true)
}
