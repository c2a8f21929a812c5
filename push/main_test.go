package push_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No goroutine of the router, its workers, timers or senders may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
