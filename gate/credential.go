package gate

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Header is one header the gate adds to every forwarded request.
type Header struct {
	Name, Value string
}

// ParseCredential reads 'Name: value with $VAR' and expands $VAR and ${VAR}
// from lookup (the gate's environment), so the secret never appears in the
// command line. A variable that is unset or empty is an error: forwarding with
// an empty credential would only confuse.
func ParseCredential(spec string, lookup func(string) (string, bool)) (Header, error) {
	name, value, ok := strings.Cut(spec, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	// The spec is never quoted back: written without its header or with a
	// mistyped one, it may be the secret itself.
	if !ok || name == "" || value == "" {
		return Header{}, errors.New("want 'Header: value', the value's secrets as $VARS")
	}
	if !validHeaderName(name) {
		return Header{}, errors.New("the part before the first colon is not a header name")
	}
	var missing []string
	value = os.Expand(value, func(v string) string {
		s, ok := lookup(v)
		if !ok || s == "" {
			missing = append(missing, v)
		}
		return s
	})
	if len(missing) > 0 {
		return Header{}, fmt.Errorf("credential for %s: environment variable %s is not set", name, strings.Join(missing, ", "))
	}
	if strings.ContainsAny(value, "\r\n") {
		return Header{}, fmt.Errorf("credential for %s: the value holds a line break", name)
	}
	return Header{Name: http.CanonicalHeaderKey(name), Value: value}, nil
}

// ValidateHeaderName checks a --strip argument.
func ValidateHeaderName(name string) error {
	if !validHeaderName(name) {
		return fmt.Errorf("%q is not a header name", name)
	}
	return nil
}

// validHeaderName is RFC 9110's token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c >= 0x80 || !strings.ContainsRune("!#$%&'*+-.^_`|~", c) && !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
