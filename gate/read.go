package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gatehousehq/gatehouse/api"
)

// exchange is one request as the gate judges it.
type exchange struct {
	body   []byte
	path   string // escaped, as sent upstream
	target api.NewPending
	digest string
}

// read bounds and hashes the body and computes the grant's fields.
func (g *Gate) read(w http.ResponseWriter, r *http.Request) (*exchange, bool) {
	p := r.URL.EscapedPath()
	if !strings.HasPrefix(p, "/") {
		writeError(w, http.StatusBadRequest, "invalid_input", "The request's path must start with /.")
		return nil, false
	}
	if why := pathProblem(p); why != "" {
		// The upstream may route it to a path the rules did not judge.
		writeError(w, http.StatusBadRequest, "invalid_input", why+" Nothing was sent.")
		return nil, false
	}
	if why := queryProblem(r.URL.RawQuery); why != "" {
		writeError(w, http.StatusBadRequest, "invalid_input", why+" Nothing was sent.")
		return nil, false
	}
	max := g.cfg.MaxBody
	if r.ContentLength > max {
		writeTooLarge(w, max)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_input", "The request body could not be read.")
		return nil, false
	}
	if int64(len(body)) > max {
		writeTooLarge(w, max)
		return nil, false
	}
	sum := sha256.Sum256(body)
	x := &exchange{body: body, path: g.base + p}
	x.target = api.NewPending{Sandbox: g.cfg.Sandbox, Method: r.Method, Host: g.host, Port: g.port,
		Path: x.path, Query: r.URL.RawQuery, BodySHA256: hex.EncodeToString(sum[:])}
	x.digest = Digest(x.target)
	return x, true
}

// Digest is Gatehouse's digest of a grant's request (docs/pending.md), for the
// gate's logs; Gatehouse computes its own.
func Digest(t api.NewPending) string {
	s := strings.Join([]string{"v1", t.Sandbox, strings.ToUpper(t.Method), strings.ToLower(t.Host),
		strconv.Itoa(t.Port), t.Path, t.Query, strings.ToLower(t.BodySHA256)}, "\n")
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
