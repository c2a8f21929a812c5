package gate

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

// WaitPrefix is where the gate answers the agent's wait for a grant. The wait
// URL in Gatehouse's approval_pending body needs the gate's runtime token,
// which the agent never holds; the gate serves the same reads here under a
// reserved path (RFC 8615) that an upstream API does not use, with its own
// token, and names the URL in the Gatehouse-Wait header of the 403.
const WaitPrefix = "/.well-known/gatehouse/pending/"

// reservedRoot is the gate's namespace; nothing under it reaches the upstream.
const reservedRoot = "/.well-known/gatehouse"

// reserved reports a path in the gate's namespace, in any case (an upstream
// may route paths case-insensitively).
func reserved(path string) bool {
	p := strings.ToLower(path)
	return p == reservedRoot || strings.HasPrefix(p, reservedRoot+"/")
}

// WaitHeader names the gate's wait URL on an approval_pending answer.
const WaitHeader = "Gatehouse-Wait"

var pendingIDPattern = lazyregexp.New(`^[a-z][a-z0-9_]{0,63}$`)

// serveWait answers GET WaitPrefix{id} and WaitPrefix{id}/wait?timeout=S from
// Gatehouse. It only reads: nothing here can decide or release a grant.
func (g *Gate) serveWait(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, WaitPrefix)
	id, wait := strings.CutSuffix(rest, "/wait")
	if !ok || r.Method != http.MethodGet || !pendingIDPattern.MatchString(id) {
		writeError(w, http.StatusNotFound, "not_found",
			"This path is the gate's own and is never sent upstream; only GET "+WaitPrefix+"{pending_id}[/wait] is served here.")
		return
	}
	var st *api.PendingWait
	var err error
	if wait {
		timeout := 60
		if s := r.URL.Query().Get("timeout"); s != "" {
			if timeout, err = strconv.Atoi(s); err != nil || timeout < 1 || timeout > 300 {
				writeError(w, http.StatusBadRequest, "invalid_input", "timeout must be whole seconds from 1 to 300.")
				return
			}
		}
		st, err = g.cfg.Grants.WaitPending(r.Context(), id, time.Duration(timeout)*time.Second)
	} else {
		st, err = g.cfg.Grants.GetPending(r.Context(), id)
	}
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.Status == http.StatusNotFound:
		writeError(w, http.StatusNotFound, "not_found", "No such pending grant.")
	case errors.As(err, &ce) && ce.Status == http.StatusTooManyRequests:
		writeBusy(w, ce, "Gatehouse is answering too many waits from this gate right now. Wait the Retry-After seconds, then call this URL again.")
	case err != nil:
		if r.Context().Err() == nil {
			g.log.Warn("gate wait failed", "pending_id", id, "err", err)
			writeError(w, http.StatusBadGateway, "gatehouse_unavailable", "The gate could not reach Gatehouse; call again.")
		}
	default:
		b, _ := json.Marshal(st)
		writeJSON(w, http.StatusOK, b)
	}
}

// waitURL is the gate's wait URL for a grant, as the agent reaches the gate.
func waitURL(r *http.Request, id string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + WaitPrefix + id + "/wait"
}
