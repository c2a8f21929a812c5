package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// TestMain sums up the skipped tests and why, for a run without -v.
func TestMain(m *testing.M) { testkit.Main(m) }
