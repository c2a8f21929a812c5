package gate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
)

// ServeHTTP judges one request: a grant approved for exactly this request is
// claimed and forwarded once; otherwise the rules allow, deny or ask.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if reserved(r.URL.Path) {
		// The gate's own namespace: answered here, never forwarded.
		g.serveWait(w, r)
		return
	}
	x, ok := g.read(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	claim, err := g.cfg.Grants.ClaimPending(ctx, x.target)
	if err != nil {
		// Gatehouse unreachable releases nothing; the rules still hold.
		g.log.Warn("gate claim failed", "method", r.Method, "path", x.path, "digest", x.digest, "err", err)
	} else if g.settleClaim(w, r, x, claim) {
		return
	}
	action, rule := g.cfg.Rules.Decide(r.Method, x.path)
	switch action {
	case Allow:
		g.outcome("allowed", r, x, "rule", rule)
		g.forward(w, r, x)
	case Deny:
		g.outcome("denied", r, x, "rule", rule)
		writeError(w, http.StatusForbidden, "gate_denied",
			"The gate's rules refuse this request ("+rule+"). It was not sent. Do not retry it or a variant of it.")
	default:
		g.ask(w, r, x, rule)
	}
}

// settleClaim acts on a claim's answer; false means nothing matched (no_grant)
// and the rules decide.
func (g *Gate) settleClaim(w http.ResponseWriter, r *http.Request, x *exchange, c *client.Claim) bool {
	switch {
	case c.Released:
		g.outcome("released", r, x, "pending_id", c.PendingID, "request_id", c.RequestID)
		g.forward(w, r, x)
	case c.Code == client.ClaimApprovalPending:
		id := pendingID(c.Refusal)
		g.outcome("pending", r, x, "pending_id", id, "filed", false)
		w.Header().Set(WaitHeader, waitURL(r, id))
		handOn(w, c.Refusal)
	case c.Code == client.ClaimApprovalDenied || c.Code == client.ClaimApprovalExpired:
		g.outcome("refused", r, x, "pending_id", pendingID(c.Refusal), "reason", c.Code)
		handOn(w, c.Refusal)
	default:
		return false
	}
	return true
}

// fileTimeout bounds one filing with Gatehouse.
const fileTimeout = 30 * time.Second

// maxRefiles bounds how often an ask that a rule approves files again after
// an identical request claimed its approval first.
const maxRefiles = 64

// ask files a pending grant and answers the agent at once with what Gatehouse
// wrote for it; nothing is held open while a person decides.
func (g *Gate) ask(w http.ResponseWriter, r *http.Request, x *exchange, rule string) {
	t := x.target
	t.Policy, t.Middleware = rule, Middleware
	// The operator reads the body (its first bytes when long) on the card;
	// Gatehouse checks a whole one against body_sha256.
	size := int64(len(x.body))
	t.Body, t.BodySize = x.body[:min(len(x.body), api.MaxPendingBody)], &size
	f, err := g.file(r, x, t)
	// An operator's rule approved it as it was filed: claim it like a retry.
	// An identical request may take that approval first (any claim with the
	// digest may); the rule approves each filing, so file again. Each claim
	// lost is another identical request released, so of n racing at once the
	// last one loses at most n-1 times: the bound is for a flood, and the
	// request's own context ends the loop when its client goes.
	for range maxRefiles {
		if err != nil || !f.ClaimNow || r.Context().Err() != nil {
			break
		}
		c, cerr := g.cfg.Grants.ClaimPending(r.Context(), x.target)
		if cerr == nil && g.settleClaim(w, r, x, c) {
			return
		}
		if err = cerr; err == nil {
			f, err = g.cfg.Grants.FilePending(r.Context(), t)
		}
	}
	if err != nil {
		g.log.Error("gate could not file a pending grant", "method", r.Method, "path", x.path, "digest", x.digest, "err", err)
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status == http.StatusBadRequest {
			writeError(w, http.StatusBadRequest, "invalid_input", "Gatehouse cannot bind an approval to this request: "+ce.Detail)
			return
		}
		if errors.As(err, &ce) && ce.Status == http.StatusTooManyRequests {
			// A limit, not an outage: the agent can wait and send it again.
			writeBusy(w, ce, "This request needs a person's approval, and Gatehouse is taking too many approval requests from this gate right now. "+
				"Nothing was sent and nothing was filed. Wait the Retry-After seconds, then send the identical request once more; do not send variants of it.")
			return
		}
		writeError(w, http.StatusBadGateway, "gatehouse_unavailable",
			"This request needs a person's approval, and the gate could not reach Gatehouse to ask. Nothing was sent.")
		return
	}
	if f.ClaimNow || f.Response == nil {
		writeError(w, http.StatusBadGateway, "gatehouse_unavailable", "The gate could not settle this request with Gatehouse. Nothing was sent.")
		return
	}
	if f.Status == "pending" {
		g.outcome("pending", r, x, "pending_id", f.PendingID, "request_id", f.RequestID, "rule", rule, "filed", true)
		w.Header().Set(WaitHeader, waitURL(r, f.PendingID))
	} else {
		g.outcome("refused", r, x, "pending_id", f.PendingID, "request_id", f.RequestID, "rule", rule, "reason", f.Status)
	}
	// Re-encoded from api's own type, so the bytes are the ones Gatehouse wrote.
	body, err := json.Marshal(f.Response.Body)
	if err != nil {
		writeError(w, http.StatusBadGateway, "gatehouse_unavailable", "The gate could not settle this request with Gatehouse. Nothing was sent.")
		return
	}
	handOn(w, body)
}

// file files the grant. Identical requests asked at the same moment share one
// filing, so the operator sees one card, not one per racing retry; only a
// filing in flight is shared, and a release is always its own claim.
func (g *Gate) file(r *http.Request, x *exchange, t api.NewPending) (*api.PendingFiled, error) {
	led := false
	v, err, shared := g.filing.Do(x.digest, func() (any, error) {
		led = true
		// Not cancelled with this agent's request: others may be waiting on it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), fileTimeout)
		defer cancel()
		return g.cfg.Grants.FilePending(ctx, t)
	})
	if err != nil {
		return nil, err
	}
	f := v.(*api.PendingFiled)
	if shared && !led && f.ClaimNow {
		// A rule approved the shared filing, and one grant releases one
		// request: this one files its own.
		return g.cfg.Grants.FilePending(r.Context(), t)
	}
	return f, nil
}

// outcome logs what the gate did with a request.
func (g *Gate) outcome(what string, r *http.Request, x *exchange, attrs ...any) {
	args := append([]any{"outcome", what, "method", r.Method, "host", g.host, "port", g.port, "path", x.path,
		"query", x.target.Query, "digest", x.digest}, attrs...)
	g.log.Info("gate "+what, args...)
}
