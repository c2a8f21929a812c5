package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"

	"github.com/gatehousehq/gatehouse/client"
)

// errNoToken is what a client command says when it has no token: without one
// every call fails, as "connection refused" or a 401 naming no setting.
var errNoToken = errors.New("no token: set GATEHOUSE_TOKEN (or pass --token) to an agent or runtime token, " +
	"which an operator makes with `gatehouse token create --role agent --name NAME`; " +
	"set GATEHOUSE_URL (or --url) too unless the server is at http://127.0.0.1:8080")

// newClient is the client of the commands that call the server as an agent
// or a runtime (ask, hook, runtime, gate, acp, codex). It refuses an empty
// token or a URL that is not http(s), and its calls name GATEHOUSE_URL when
// no server answers there.
func newClient(url, token string) (*client.Client, error) {
	if err := checkClient(url, token); err != nil {
		return nil, err
	}
	return explainedClient(url, token), nil
}

// checkClient says what is missing from a client command's settings.
func checkClient(url, token string) error {
	if token == "" {
		return errNoToken
	}
	if u, err := neturl.Parse(url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("GATEHOUSE_URL (or --url) %q is not the server's http(s) URL, e.g. http://127.0.0.1:8080", url)
	}
	return nil
}

// explainedClient is the client whose failures to connect name GATEHOUSE_URL.
// The bridges (acp, codex app-server) use it even with bad settings: without
// Gatehouse the editor or Codex's client alone decides, as when it is down.
func explainedClient(url, token string) *client.Client {
	c := client.New(url, token)
	c.HTTP.Transport = unreachable{next: http.DefaultTransport, url: url}
	return c
}

// unreachable adds, to a failure to connect, which setting named the server.
type unreachable struct {
	next http.RoundTripper
	url  string
}

func (t unreachable) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	var op *net.OpError
	if err != nil && errors.As(err, &op) && op.Op == "dial" {
		return nil, fmt.Errorf("no Gatehouse server answers at %s (GATEHOUSE_URL or --url; start one with `gatehouse serve`): %w", t.url, err)
	}
	return resp, err
}
