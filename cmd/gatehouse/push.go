//go:build !agent

package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/push"
)

// runPushTest is `gatehouse push test`: one test notification to every registered
// device, each result printed; exit 1 when any was not sent.
func runPushTest(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("push test", stdout, stderr)
	database, create := databaseFlags(fs.FlagSet)
	baseURL := fs.String("base-url", env("GATEHOUSE_BASE_URL", "http://127.0.0.1:8080"), "public URL a tap opens (GATEHOUSE_BASE_URL)")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if fs.NArg() > 0 {
		return fs.usageError(2, "unexpected argument %q", fs.Arg(0))
	}
	store, closeDB, err := openStore(*database, *create)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	defer closeDB()
	senders, _, closePush, err := app.PushSenders(ctx, store, *baseURL)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	defer closePush()
	results, err := push.SendTest(ctx, store, senders, *baseURL)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	if len(results) == 0 {
		fmt.Fprintln(stderr, "gatehouse: no devices are registered (POST /v1/devices, or enable notifications on the page)")
		return 1
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DEVICE\tKIND\tNAME\tRESULT")
	code := 0
	for _, r := range results {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Device.ID, r.Device.Kind, r.Device.Name, r.Result)
		if !r.Result.Sent() {
			code = 1
		}
	}
	w.Flush()
	return code
}
