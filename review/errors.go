package review

import (
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
)

// describe says what a failed call met, by status only: an SDK's error text
// carries the request it made, and that is not for the log.
func describe(err error) string {
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return fmt.Sprintf("HTTP %d", ae.StatusCode)
	}
	var oe *openai.Error
	if errors.As(err, &oe) {
		return fmt.Sprintf("HTTP %d", oe.StatusCode)
	}
	return "connection failed"
}
