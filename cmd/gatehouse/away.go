//go:build !agent

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
)

// runAway sets the calling operator's availability through the server's API
// (--url/--token or GATEHOUSE_URL with GATEHOUSE_TOKEN, an operator token):
// away on|off [--until T], away status, away quiet START END TZ | away quiet off.
func runAway(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	sub := args[0]
	fs := newFlags("away "+sub, stdout, stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "the server (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "your operator token")
	untilFlag := new(string)
	if sub == "on" {
		untilFlag = fs.String("until", "", "away until this time (RFC 3339) or for this long (e.g. 2h); default: until away off")
	}
	positional, err := fs.parseInterspersed(args[1:])
	if err != nil {
		return exitCode(err, 2)
	}
	if *token == "" {
		fmt.Fprintln(stderr, "gatehouse: away needs your operator token: --token or GATEHOUSE_TOKEN")
		return 2
	}
	c := client.New(*url, *token)
	var a *api.Availability
	switch {
	case sub == "on" && len(positional) == 0:
		var until *time.Time
		if until, err = parseUntil(*untilFlag, time.Now()); err != nil {
			fmt.Fprintln(stderr, "gatehouse:", err)
			return 2
		}
		a, err = c.SetAway(ctx, true, until)
	case sub == "off" && len(positional) == 0 && *untilFlag == "":
		a, err = c.SetAway(ctx, false, nil)
	case sub == "status" && len(positional) == 0:
		a, err = c.Availability(ctx)
	case sub == "quiet" && len(positional) == 1 && positional[0] == "off":
		a, err = c.SetQuietHours(ctx, nil)
	case sub == "quiet" && len(positional) == 3:
		a, err = c.SetQuietHours(ctx, &api.QuietHours{Start: positional[0], End: positional[1], TZ: positional[2]})
	case sub == "quiet":
		return fs.usageError(2, "want START END TZ (e.g. 22:00 07:00 Europe/Berlin), or off")
	default:
		return fs.usageError(2, "unexpected argument %q", positional[0])
	}
	if err != nil {
		reportAPIError(stderr, err)
		return 1
	}
	printAvailability(stdout, a)
	return 0
}

// parseUntil reads --until: empty (no end), a duration from now, or a time.
func parseUntil(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return nil, errors.New("--until must lie ahead")
		}
		t := now.Add(d)
		return &t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("--until %q is neither a duration like 2h nor an RFC 3339 time", s)
	}
	return &t, nil
}

func printAvailability(w io.Writer, a *api.Availability) {
	switch {
	case a.Away && a.AwayUntil != nil:
		fmt.Fprintf(w, "%s: away until %s\n", a.Operator, a.AwayUntil.Format(time.RFC3339))
	case a.Away:
		fmt.Fprintf(w, "%s: away\n", a.Operator)
	default:
		fmt.Fprintf(w, "%s: available\n", a.Operator)
	}
	if q := a.QuietHours; q != nil {
		now := ""
		if a.InQuietHours {
			now = " (now)"
		}
		fmt.Fprintf(w, "quiet hours: %s–%s %s%s\n", q.Start, q.End, q.TZ, now)
	}
}
