package rules_test

import (
	"github.com/gatehousehq/gatehouse/models"
)

func allowDeny() []models.Option {
	return []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
}

func ptr[T any](v T) *T { return &v }
