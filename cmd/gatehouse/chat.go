//go:build !agent

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
)

// runChatLink is `gatehouse chat link`: it prints a one-time code that links the
// chat identity which sends it (`/gatehouse link CODE` in Slack) to an
// operator: through the server's API, the operator whose token calls it; in
// the database, the operator named by --operator.
func runChatLink(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("chat link", stdout, stderr)
	target := adminFlags(fs)
	operator := fs.String("operator", "", "with --database: the operator the code links to")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if fs.NArg() > 0 {
		return fs.usageError(2, "unexpected argument %q", fs.Arg(0))
	}
	c, err := target.remote()
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 2
	}
	var out api.ChatLinkCode
	if c != nil {
		if err := c.Do(ctx, "POST", "/v1/chat/link-codes", nil, nil, &out); err != nil {
			reportAPIError(stderr, err)
			return 1
		}
	} else {
		if *operator == "" {
			fmt.Fprintln(stderr, "gatehouse: --operator NAME is required with --database (or call the server with --url and an operator's --token)")
			return 2
		}
		store, closeDB, err := openStore(*target.database, false)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		defer closeDB()
		code, expires, err := store.CreateChatLinkCode(ctx, models.Principal{Role: models.RoleOperator, Name: *operator})
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 1
		}
		out = api.ChatLinkCode{Code: code, Operator: *operator, ExpiresAt: expires}
	}
	fmt.Fprintln(stdout, out.Code)
	fmt.Fprintf(stderr, "Send it within %s, once, from the chat account to link to operator %s:\n  Slack: /gatehouse link %s\n",
		time.Until(out.ExpiresAt).Round(time.Minute), out.Operator, out.Code)
	return 0
}
