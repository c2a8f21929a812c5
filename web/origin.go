package web

import (
	"net/http"
	"net/url"
	"strings"
)

// sameOrigin reports whether a browser's Origin header is exactly the
// service's: scheme, host and port of --base-url (a missing port is the
// scheme's default). A request without Origin is no browser's and passes: a
// browser always sends it on a websocket handshake.
func sameOrigin(base *url.URL, r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	return strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(u.Hostname(), base.Hostname()) &&
		portOf(u) == portOf(base)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
