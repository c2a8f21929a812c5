package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
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
	positional, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	store, closeDB, err := openStore(*database, *create)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	defer closeDB()
	switch sub {
	case "create":
		_, secret, err := store.CreateToken(ctx, *role, *name)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		fmt.Fprintln(stdout, secret)
	case "list":
		ts, err := store.ListTokens(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tROLE\tNAME\tCREATED\tSTATE")
		for _, t := range ts {
			state := "live"
			if t.RevokedAt != nil {
				state = "revoked " + t.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Role, t.Name, t.CreatedAt.Format(time.RFC3339), state)
		}
		w.Flush()
	case "revoke":
		if len(positional) != 1 {
			fmt.Fprintln(stderr, "usage: gatehouse token revoke ID|NAME")
			return 2
		}
		n, err := store.RevokeToken(ctx, positional[0])
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
