package chat

import (
	"errors"
	"net"
	"net/url"
)

// unreachable reports whether err is a failure to reach a chat service (DNS,
// a refused connection, a timeout) rather than the service's answer: a start
// on a host without DNS must not blame the token.
func unreachable(err error) bool {
	var ue *url.Error
	var ne net.Error
	return err != nil && (errors.As(err, &ue) || errors.As(err, &ne))
}
