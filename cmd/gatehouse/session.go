//go:build !agent

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// runSession lists and ends page sessions directly in the database. Ending one
// goes through the store's revocation path, so a server running beside it
// refuses the cookie at once (SQLite's epoch, PostgreSQL's NOTIFY). It never
// creates a database.
func runSession(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: gatehouse session list|revoke ID [--database URL]")
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("session "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	database := fs.String("database", defaultDatabase(), "database URL (GATEHOUSE_DATABASE; default in the user's data directory)")
	positional, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	if sub != "list" && sub != "revoke" {
		fmt.Fprintf(stderr, "gatehouse: unknown session command %q\n", sub)
		return 2
	}
	if sub == "revoke" && len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: gatehouse session revoke ID [--database URL]")
		return 2
	}
	store, closeDB, err := openStore(*database, false)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	defer closeDB()
	if sub == "revoke" {
		if err := store.EndSessionID(ctx, positional[0]); err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		fmt.Fprintln(stdout, "ended session", positional[0])
		return 0
	}
	ss, err := store.ListSessions(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tOPERATOR\tCREATED\tLAST SEEN\tEXPIRES\tUSER AGENT")
	for _, s := range ss {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, s.CreatedAt.Format(time.RFC3339),
			s.LastSeenAt.Format(time.RFC3339), s.ExpiresAt.Format(time.RFC3339), s.UserAgent)
	}
	w.Flush()
	return 0
}
