package store

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// requestColumns is every column of requests, in the order loadRequest reads
// them. TestRequestColumns holds it to the GORM schema, so a new field cannot
// be left out.
const requestColumns = "id, kind, status, version, title, summary, detail, risk, tool, command, options, allow_answer, " +
	"default_option, decision, answer, note, source, source_ref, runtime_id, pending_id, owner_id, idempotency_key, " +
	"created_by, created_at, updated_at, expires_at, resolved_at, decided_by, decided_via, actuation_state, attempts, " +
	"hold_rule, hold_until, hold_then, hold_effect, sealed, edited_at, decided_digest, approvers, votes, filed_for, filing_digest, " +
	"escalation_step, escalate_at, escalations, grant_id, review"

// loadRequest reads one request by id with hand SQL and a hand scan: every
// decision, wait and read loads a record, and GORM's reflection over its
// forty fields cost several times SQLite's own work on the lookup. It returns
// gorm.ErrRecordNotFound when there is no such row, as Take does.
func loadRequest(tx *gorm.DB, id string) (*models.Request, error) {
	var r models.Request
	err := hotScan(tx, "SELECT "+requestColumns+" FROM requests WHERE id = ?", []any{id},
		&r.ID, &r.Kind, &r.Status, &r.Version, &r.Title, &r.Summary, &r.Detail, &r.Risk, &r.Tool, &r.Command, serialized{&r.Options}, &r.AllowAnswer,
		&r.DefaultOption, &r.Decision, &r.Answer, &r.Note, &r.Source, serialized{&r.SourceRef}, &r.RuntimeID, &r.PendingID, &r.OwnerID, &r.IdempotencyKey,
		&r.CreatedBy, &r.CreatedAt, &r.UpdatedAt, &r.ExpiresAt, &r.ResolvedAt, &r.DecidedBy, &r.DecidedVia, &r.ActuationState, &r.Attempts,
		&r.HoldRule, &r.HoldUntil, &r.HoldThen, &r.HoldEffect, &r.Sealed, &r.EditedAt, &r.DecidedDigest, serialized{&r.Approvers}, serialized{&r.Votes}, &r.FiledFor, &r.FilingDigest,
		&r.EscalationStep, &r.EscalateAt, serialized{&r.Escalations}, &r.GrantID, serialized{&r.Review})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gorm.ErrRecordNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", id, err)
	}
	return &r, nil
}

// insertRequest writes r as a new row with hand SQL, for the reason
// loadRequest reads it so: a filing's INSERT built by GORM's reflection cost
// as much as SQLite's own work on it. It stores what GORM's Create stores (the
// JSON columns as its serializer writes them, a zero actuation state as the
// column's default); TestInsertRequest holds the two to the same row.
func insertRequest(tx *gorm.DB, r *models.Request) error {
	if r.ActuationState == "" {
		r.ActuationState = models.ActuationNone
	}
	options, err := jsonValue(r.Options)
	if err != nil {
		return err
	}
	sourceRef, err := jsonValue(r.SourceRef)
	if err != nil {
		return err
	}
	_, err = hotExec(tx, "INSERT INTO requests ("+requestColumns+") VALUES ("+requestPlaceholders+")",
		r.ID, r.Kind, r.Status, r.Version, r.Title, r.Summary, r.Detail, r.Risk, r.Tool, r.Command, options, r.AllowAnswer,
		r.DefaultOption, r.Decision, r.Answer, r.Note, r.Source, sourceRef, r.RuntimeID, r.PendingID, r.OwnerID, r.IdempotencyKey,
		r.CreatedBy, r.CreatedAt, r.UpdatedAt, r.ExpiresAt, r.ResolvedAt, r.DecidedBy, r.DecidedVia, r.ActuationState, r.Attempts,
		r.HoldRule, r.HoldUntil, r.HoldThen, r.HoldEffect, r.Sealed, r.EditedAt, r.DecidedDigest, jsonColumn{r.Approvers}, jsonColumn{r.Votes}, r.FiledFor, r.FilingDigest,
		r.EscalationStep, r.EscalateAt, jsonColumn{r.Escalations}, r.GrantID, jsonColumn{r.Review})
	return err
}

// requestPlaceholders is one ? for each of requestColumns.
var requestPlaceholders = strings.TrimSuffix(strings.Repeat("?, ", strings.Count(requestColumns, ",")+1), ", ")

// jsonValue is v as GORM's JSON serializer stores it: its JSON text, or NULL
// for a nil map or slice.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil, err
	}
	return string(b), nil
}

// jsonColumn writes v as GORM's JSON serializer does, for hand SQL and map
// updates, which bypass the serializer: the domain types carry no Valuer.
type jsonColumn struct{ v any }

// Value implements driver.Valuer.
func (c jsonColumn) Value() (driver.Value, error) { return jsonValue(c.v) }

// serialized scans a column GORM's JSON serializer wrote into dst as that
// serializer reads it back: NULL or empty leaves dst zero.
type serialized struct{ dst any }

// Scan implements sql.Scanner.
func (s serialized) Scan(src any) error {
	switch v := src.(type) {
	case string:
		if v == "" {
			return nil
		}
	case []byte:
		if len(v) == 0 {
			return nil
		}
	}
	return scanJSON(src, s.dst)
}

func scanJSON(src, dst any) error {
	switch s := src.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(s), dst)
	case []byte:
		return json.Unmarshal(s, dst)
	}
	return fmt.Errorf("cannot read %T as JSON", src)
}
