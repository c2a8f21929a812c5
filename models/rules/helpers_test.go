package rules_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

func allowDeny() []models.Option {
	return []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
}

func ptr[T any](v T) *T { return &v }

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing arrived in 10s")
		panic("unreachable")
	}
}
