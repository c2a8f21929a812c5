//go:build !agent

package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// runSession lists and ends page sessions: through the server's API with an
// operator's token (--url/--token or GATEHOUSE_URL with GATEHOUSE_TOKEN), else
// directly in the database. Ending one goes through the store's revocation
// path either way, so a running server refuses the cookie at once (SQLite's
// epoch, PostgreSQL's NOTIFY). It never creates a database.
func runSession(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	sub := args[0]
	fs := newFlags("session "+sub, stdout, stderr)
	target := adminFlags(fs)
	positional, err := fs.parseInterspersed(args[1:])
	if err != nil {
		return exitCode(err, 2)
	}
	switch {
	case sub == "revoke" && len(positional) != 1:
		return fs.usageError(2, "want one session ID, got %d arguments", len(positional))
	case sub != "revoke" && len(positional) > 0:
		return fs.usageError(2, "unexpected argument %q", positional[0])
	}
	c, err := target.remote()
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 2
	}
	var sessions []api.Session
	if c != nil {
		if sub == "revoke" {
			err = c.EndSession(ctx, positional[0])
		} else {
			sessions, err = c.ListSessions(ctx)
		}
		if err != nil {
			reportAPIError(stderr, err)
			return 1
		}
	} else {
		st, closeDB, err := openStore(*target.database, false)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		defer closeDB()
		if sub == "revoke" {
			err = st.EndSessionID(ctx, positional[0], cliActor(), store.ViaCLI)
		} else {
			var ss []models.Session
			ss, err = st.ListSessions(ctx)
			for _, s := range ss {
				sessions = append(sessions, api.Session{ID: s.ID, Operator: s.Name, CreatedAt: s.CreatedAt, LastSeenAt: s.LastSeenAt,
					ExpiresAt: s.ExpiresAt, UserAgent: s.UserAgent})
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
	}
	if sub == "revoke" {
		fmt.Fprintln(stdout, "ended session", positional[0])
		return 0
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tOPERATOR\tCREATED\tLAST SEEN\tEXPIRES\tUSER AGENT")
	for _, s := range sessions {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Operator, s.CreatedAt.Format(time.RFC3339),
			s.LastSeenAt.Format(time.RFC3339), s.ExpiresAt.Format(time.RFC3339), s.UserAgent)
	}
	w.Flush()
	return 0
}
