//go:build !agent

package main

import (
	"context"
	"fmt"
	"io"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// runToken creates, lists and revokes tokens: through the server's API with
// an operator's token (--url/--token or GATEHOUSE_URL with GATEHOUSE_TOKEN),
// else directly in the database, which works beside a running server. Either
// way each creation and revocation is in the audit chain.
func runToken(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	sub := args[0]
	fs := newFlags("token "+sub, stdout, stderr)
	target := adminFlags(fs)
	create, role, name, groups, forName := new(bool), new(string), new(string), new(string), new(string)
	if sub == "create" {
		create = fs.Bool("create", false, "create the database if it does not exist (with --database)")
		role = fs.String("role", "", "operator, runtime or agent")
		name = fs.String("name", "", "a name for the token's holder")
		groups = fs.String("groups", "", "comma-separated groups of an operator, e.g. sre,release")
		forName = fs.String("for", "", "the operator an agent or runtime token acts for, who may never approve its requests")
	}
	positional, err := fs.parseInterspersed(args[1:])
	if err != nil {
		return exitCode(err, 2)
	}
	switch {
	case sub == "revoke" && len(positional) != 1:
		return fs.usageError(2, "want one token ID or NAME, got %d arguments", len(positional))
	case sub != "revoke" && len(positional) > 0:
		return fs.usageError(2, "unexpected argument %q", positional[0])
	}
	c, err := target.remote()
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 2
	}
	if c != nil && *create {
		fmt.Fprintln(stderr, "gatehouse: --create makes a database file; it does not go with --url/--token")
		return 2
	}
	n := store.NewToken{Role: *role, Name: *name, Groups: splitList(*groups), For: *forName}
	var tokens []api.Token
	var revoked int64
	loginAt := "/login"
	if c != nil {
		loginAt = c.BaseURL + "/login"
		switch sub {
		case "create":
			var t *api.CreatedToken
			if t, err = c.CreateToken(ctx, api.NewToken{Role: n.Role, Name: n.Name, Groups: n.Groups, For: n.For}); err == nil {
				fmt.Fprintln(stdout, t.Secret)
			}
		case "list":
			tokens, err = c.ListTokens(ctx)
		case "revoke":
			revoked, err = c.RevokeToken(ctx, positional[0])
		}
		if err != nil {
			reportAPIError(stderr, err)
			return 1
		}
	} else {
		st, closeDB, err := openStore(*target.database, *create)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		defer closeDB()
		switch sub {
		case "create":
			var secret string
			if _, secret, err = st.CreateTokenBy(ctx, n, cliActor(), store.ViaCLI); err == nil {
				fmt.Fprintln(stdout, secret)
			}
		case "list":
			var ts []models.Token
			ts, err = st.ListTokens(ctx)
			for i := range ts {
				tokens = append(tokens, api.Token{ID: ts[i].ID, Role: ts[i].Role, Name: ts[i].Name, Groups: ts[i].Groups, For: ts[i].For,
					CreatedAt: ts[i].CreatedAt, RevokedAt: ts[i].RevokedAt})
			}
		case "revoke":
			revoked, err = st.RevokeTokenBy(ctx, positional[0], cliActor(), store.ViaCLI)
		}
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
	}
	switch sub {
	case "create":
		if n.Role == models.RoleOperator {
			// The first-start login URL dies now: say how to log in instead.
			fmt.Fprintf(stderr, "gatehouse: an operator token exists now, so the one-time login URL serve printed no longer works; log in at %s with this token (the form's token field)\n", loginAt)
		}
	case "list":
		printTokens(stdout, tokens)
	case "revoke":
		fmt.Fprintf(stdout, "revoked %d token(s)\n", revoked)
	}
	return 0
}

// cliActor names who made a change through the database file in the audit
// chain: the command and, when known, the OS user who ran it.
func cliActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

func printTokens(stdout io.Writer, ts []api.Token) {
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
