//go:build !agent

package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models/store"
)

// runRemembered lists and revokes remembered allows: through the server's
// API with an operator's token (--url/--token or GATEHOUSE_URL with
// GATEHOUSE_TOKEN), else in the database directly. A revocation is audited
// and holds at once on every replica.
func runRemembered(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	sub := args[0]
	fs := newFlags("remembered "+sub, stdout, stderr)
	target := adminFlags(fs)
	all := new(bool)
	if sub == "list" {
		all = fs.Bool("all", false, "list expired and revoked ones too")
	}
	positional, err := fs.parseInterspersed(args[1:])
	if err != nil {
		return exitCode(err, 2)
	}
	switch {
	case sub == "revoke" && len(positional) != 1:
		return fs.usageError(2, "want one remembered allow's ID, got %d arguments", len(positional))
	case sub != "revoke" && len(positional) > 0:
		return fs.usageError(2, "unexpected argument %q", positional[0])
	}
	c, err := target.remote()
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 2
	}
	var list []api.Remembered
	var revoked *api.Remembered
	if c != nil {
		if sub == "list" {
			list, err = c.ListRemembered(ctx)
		} else {
			revoked, err = c.RevokeRemembered(ctx, positional[0])
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
		if sub == "list" {
			gs, now, lerr := st.ListRemembered(ctx)
			for i := range gs {
				list = append(list, gs[i].API(now))
			}
			err = lerr
		} else {
			g, rerr := st.RevokeRemembered(ctx, positional[0], cliActor(), store.ViaCLI)
			if rerr == nil {
				a := g.API(time.Now())
				revoked = &a
			}
			err = rerr
		}
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
	}
	if revoked != nil {
		fmt.Fprintf(stdout, "revoked %s (%s; uses so far: %d)\n", revoked.ID, revoked.Match, revoked.Uses)
		return 0
	}
	printRemembered(stdout, list, *all)
	return 0
}

func printRemembered(stdout io.Writer, list []api.Remembered, all bool) {
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tFILER\tSCOPE\tTOOL\tMATCH\tUSES\tBY\tENDS\tSTATE")
	for _, g := range list {
		state := "live"
		switch {
		case g.RevokedAt != nil:
			state = "revoked"
		case !g.Live:
			state = "expired"
		}
		if state != "live" && !all {
			continue
		}
		scope := g.Scope
		switch {
		case g.Session != "":
			scope += " " + g.Session
		case g.Cwd != "":
			scope += " " + g.Cwd
		}
		ends := "when revoked"
		if g.ExpiresAt != nil {
			ends = g.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", g.ID, g.Filer, scope, g.Tool, g.Match, g.Uses, g.CreatedBy, ends, state)
	}
	w.Flush()
}
