package push_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"go.uber.org/goleak"
)

// No goroutine of the router, its workers, timers or senders may outlive a
// test; the skipped tests are summed up for a run without -v.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Summarized(m)) }
