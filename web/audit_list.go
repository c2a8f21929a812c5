package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// AuditLog is what the audit routes read: the hash chains and their signed head.
type AuditLog interface {
	AuditEntries(ctx context.Context, chain uint32, after uint64, limit int) ([]store.Audit, error)
	AuditHead(ctx context.Context) (*store.SignedHead, error)
}

// Page sizes of GET /v1/audit.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 1000
)

func newAuditPage(chain uint32, rows []store.Audit, after uint64) api.AuditPage {
	p := api.AuditPage{Chain: chain, Entries: make([]api.AuditEntry, len(rows)), Next: after}
	for i := range rows {
		p.Entries[i] = rows[i].Entry()
		p.Next = rows[i].Seq
	}
	return p
}

// listAudit answers a page of one chain (?chain=, 0 when absent) after
// ?after=SEQ.
func (s *Server) listAudit(c echo.Context) error {
	chain, err := auditParam(c, "chain", 0, 0, 1<<31)
	if err != nil {
		return err
	}
	after, err := auditParam(c, "after", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := auditParam(c, "limit", defaultAuditLimit, 1, maxAuditLimit)
	if err != nil {
		return err
	}
	rows, err := s.audit.AuditEntries(c.Request().Context(), uint32(chain), after, int(limit))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newAuditPage(uint32(chain), rows, after))
}

// auditParam reads a whole-number query parameter in [lo, hi], def when absent.
func auditParam(c echo.Context, name string, def, lo, hi uint64) (uint64, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, invalid("%s must be a whole number from %d to %d", name, lo, hi)
	}
	return n, nil
}
