//go:build !agent

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
)

// runChat is `gatehouse chat link`: it prints a one-time code that links the
// chat identity which sends it (`/gatehouse link CODE` in Slack) to an
// operator: through the server's API, the operator whose token calls it; in
// the database, the operator named by --operator.
func runChat(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	const usage = "usage: gatehouse chat link [--url URL --token T | --database URL --operator NAME]"
	if len(args) == 0 || args[0] != "link" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("chat link", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := adminFlags(fs)
	operator := fs.String("operator", "", "with --database: the operator the code links to")
	if _, err := parseInterspersed(fs, args[1:]); err != nil {
		return 2
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
