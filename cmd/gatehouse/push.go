//go:build !agent

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/push"
)

// runPush is `gatehouse push test`: one test notification to every registered
// device, each result printed; exit 1 when any was not sent.
func runPush(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprintln(stderr, "usage: gatehouse push test [--database URL] [--base-url URL]")
		return 2
	}
	fs := flag.NewFlagSet("push test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	database, create := databaseFlags(fs)
	baseURL := fs.String("base-url", env("GATEHOUSE_BASE_URL", "http://127.0.0.1:8080"), "public URL a tap opens (GATEHOUSE_BASE_URL)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
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
