// Package skips is run by testkit's own test: one test that skips.
package skips

import (
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestNeedsSomething(t *testing.T) { testkit.Skipf(t, "something is missing: set SOMETHING") }
