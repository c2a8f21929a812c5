//go:build !agent

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gatehousehq/gatehouse/models/store"
)

// runToken creates, lists and revokes tokens directly in the database, so it
// works beside a running server.
func runToken(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: gatehouse token create|list|revoke …")
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	database, create := databaseFlags(fs)
	role := fs.String("role", "", "operator, runtime or agent (create)")
	name := fs.String("name", "", "a name for the token's holder (create)")
	groups := fs.String("groups", "", "comma-separated groups of an operator, e.g. sre,release (create)")
	forName := fs.String("for", "", "the operator an agent or runtime token acts for, who may never approve its requests (create)")
	positional, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	st, closeDB, err := openStore(*database, *create)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	defer closeDB()
	switch sub {
	case "create":
		_, secret, err := st.CreateNamedToken(ctx, store.NewToken{Role: *role, Name: *name, Groups: splitList(*groups), For: *forName})
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		fmt.Fprintln(stdout, secret)
	case "list":
		ts, err := st.ListTokens(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tROLE\tNAME\tGROUPS\tFOR\tCREATED\tSTATE")
		for _, t := range ts {
			state := "live"
			if t.RevokedAt != nil {
				state = "revoked " + t.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Role, t.Name, dash(strings.Join(t.Groups, ",")), dash(t.For), t.CreatedAt.Format(time.RFC3339), state)
		}
		w.Flush()
	case "revoke":
		if len(positional) != 1 {
			fmt.Fprintln(stderr, "usage: gatehouse token revoke ID|NAME")
			return 2
		}
		n, err := st.RevokeToken(ctx, positional[0])
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		fmt.Fprintf(stdout, "revoked %d token(s)\n", n)
	default:
		fmt.Fprintf(stderr, "gatehouse: unknown token command %q\n", sub)
		return 2
	}
	return 0
}

// splitList reads "a, b,c" as [a b c].
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// parseInterspersed parses flags that may come before or after positional
// arguments ("token revoke NAME --database X"), which flag.Parse alone stops at.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
