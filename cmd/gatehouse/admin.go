//go:build !agent

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gatehousehq/gatehouse/client"
)

// adminTarget is where an administration command (token, session, audit)
// acts: the server's HTTP API with an operator's token, or the database file.
// The API is what a machine that runs agents should use: whoever can open the
// database (the agent, when it runs as the same user) can make itself an
// operator, so the database file need not be there at all.
type adminTarget struct {
	fs                   *flagSet
	database, url, token *string
}

// adminFlags adds --database, --url and --token to fs. The token's default,
// GATEHOUSE_TOKEN, is read by remote, so no usage shows it.
func adminFlags(fs *flagSet) *adminTarget {
	return &adminTarget{
		fs:       fs,
		database: fs.String("database", defaultDatabase(), "open this database directly (GATEHOUSE_DATABASE)"),
		url:      fs.String("url", "", "call this server's API instead of opening the database (GATEHOUSE_URL)"),
		token:    fs.String("token", "", "an operator token for --url (default $GATEHOUSE_TOKEN)"),
	}
}

func (a *adminTarget) given(name string) bool { return a.fs.given(name) }

// remote answers a client for the server when the command is to call it, and
// nil when it is to open the database. Flags beat the environment; --database
// (or GATEHOUSE_DATABASE) beats --url/--token (or GATEHOUSE_URL with
// GATEHOUSE_TOKEN); with none of them, the default database.
func (a *adminTarget) remote() (*client.Client, error) {
	flagDB, flagAPI := a.given("database"), a.given("url") || a.given("token")
	switch {
	case flagDB && flagAPI:
		return nil, errors.New("give --database, or --url and --token, not both")
	case flagDB:
		return nil, nil
	case !flagAPI && (env("GATEHOUSE_DATABASE", "") != "" || env("GATEHOUSE_URL", "") == "" || env("GATEHOUSE_TOKEN", "") == ""):
		return nil, nil
	}
	url, token := *a.url, *a.token
	if url == "" {
		url = env("GATEHOUSE_URL", "http://127.0.0.1:8080")
	}
	if token == "" {
		token = env("GATEHOUSE_TOKEN", "")
	}
	if token == "" {
		return nil, errors.New("--url needs an operator token: --token or GATEHOUSE_TOKEN")
	}
	return client.New(url, token), nil
}

// reportAPIError prints err, with what to do when the token may not administer.
func reportAPIError(stderr io.Writer, err error) {
	fmt.Fprintln(stderr, "gatehouse:", err)
	var e *client.Error
	if errors.As(err, &e) && (e.Status == 401 || e.Status == 403) {
		fmt.Fprintln(stderr, "gatehouse: this command needs an operator token (--token or GATEHOUSE_TOKEN); on the server's own machine, --database opens the database instead")
	}
}
