package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
)

// request is a record from JSON in the stored field names.
func request(t testing.TB, s string) *models.Request {
	t.Helper()
	var in struct {
		Kind, Status, Risk string
		Approvers          *models.Approvers
		Escalations        []models.Escalated
	}
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		t.Fatal(err)
	}
	return &models.Request{Kind: in.Kind, Status: in.Status, Risk: in.Risk, Approvers: in.Approvers, Escalations: in.Escalations}
}
