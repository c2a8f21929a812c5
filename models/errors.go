package models

import (
	"errors"
	"fmt"
)

// Error codes. Each is the snake_code a client sees in {"error": code}; the web
// package maps each to one HTTP status in one table.
const (
	ECodeInvalid         = "invalid_input"
	ECodeNotFound        = "not_found"
	ECodeVersionConflict = "version_conflict"
	ECodeAlreadyDecided  = "already_decided"
	ECodeNotOpen         = "not_open"
	ECodeExpired         = "expired"
	ECodeNotOffered      = "decision_not_offered"
	// ECodeMisleading and ECodeAmbiguousChoice are in option_words.go and
	// choose.go, beside the checks that return them.
	ECodeUnauthenticated = "unauthenticated"
	ECodeForbidden       = "forbidden"
	ECodeConflict        = "conflict"
	ECodeInternal        = "internal"
	// ECodeNotDismissable refuses to dismiss a request someone waits on: only a
	// silent (waiting, review) item is retired by dismissal; the rest are decided.
	ECodeNotDismissable = "not_dismissable"
	// ECodeSealed refuses an edit of a sealed request.
	ECodeSealed = "sealed"
	// ECodeKeyReused refuses an Idempotency-Key repeated with another body:
	// a key names one filing, so a retry can never answer another's record.
	ECodeKeyReused = "idempotency_key_reused"

	// Refusals of a vote under an approval policy.
	ECodeNotApprover  = "not_an_approver"
	ECodeSelfApproval = "self_approval"
	ECodeAlreadyVoted = "already_voted"
	ECodeNoteRequired = "note_required"

	// Answers of a pending-grant claim.
	ECodeNoGrant         = "no_grant"
	ECodeApprovalPending = "approval_pending"
	ECodeApprovalDenied  = "approval_denied"
	ECodeApprovalExpired = "approval_expired"
)

// Error is the one error type of the domain. Current, when set, is the record as it
// stands, so a conflict can show the caller what won.
type Error struct {
	Code    string
	Detail  string
	Current *Request
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// Errorf builds an *Error with a formatted detail.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, or ECodeInternal when err is not an *Error.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ECodeInternal
}

// ErrorDetail is the detail of an *Error, or err's text.
func ErrorDetail(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return err.Error()
}
