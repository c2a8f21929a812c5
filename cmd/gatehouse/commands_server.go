//go:build !agent

package main

import (
	"context"
	"io"
)

// serverCommands are the commands that run the server or open its database.
func serverCommands() []*command {
	const target = "[--database URL | --url URL --token T]"
	return []*command{
		{name: "serve", run: runServe,
			args: "[--addr 127.0.0.1:8080] [--database sqlite:PATH|postgres://…] [--base-url URL] [--rules FILE] [--chat FILE] [--reviewer anthropic:MODEL|openai:MODEL]",
			help: "Run the server. On a first start with no operator it prints a one-time login URL."},
		{name: "token", help: "Create, list and revoke tokens.", subs: []*command{
			{name: "create", run: withSub("create", runToken),
				args: "--role operator|runtime|agent --name NAME [--groups G1,G2] [--for OPERATOR] [--database URL [--create] | --url URL --token T]",
				help: "Create a token and print its secret (shown once)."},
			{name: "list", run: withSub("list", runToken), args: target, help: "List the tokens."},
			{name: "revoke", run: withSub("revoke", runToken), args: "ID|NAME " + target, help: "Revoke a token by its id, or every live token of a name."},
		}},
		{name: "session", help: "List and end the operators' page sessions.", subs: []*command{
			{name: "list", run: withSub("list", runSession), args: target, help: "List the page sessions."},
			{name: "revoke", run: withSub("revoke", runSession), args: "ID " + target, help: "End a page session at once."},
		}},
		{name: "away", help: "Set the calling operator's availability (an operator token).", subs: []*command{
			{name: "on", run: withSub("on", runAway), args: "[--until 2h|RFC3339] [--url URL --token T]", help: "Mark yourself away until --until, else until away off.\nWhile away no push reaches you, and a request whose every approver is away escalates at once."},
			{name: "off", run: withSub("off", runAway), args: "[--url URL --token T]", help: "Be available again."},
			{name: "status", run: withSub("status", runAway), args: "[--url URL --token T]", help: "Show your availability and quiet hours."},
			{name: "quiet", run: withSub("quiet", runAway), args: "START END TZ | off [--url URL --token T]",
				help: "Set your daily quiet hours, or end them (off).\nSTART and END are HH:MM in the IANA time zone TZ, e.g. 22:00 07:00 Europe/Berlin."},
		}},
		{name: "remembered", help: "List and revoke remembered allows.", subs: []*command{
			{name: "list", run: withSub("list", runRemembered), args: "[--all] " + target, help: "List the live remembered allows (--all: expired and revoked ones too)."},
			{name: "revoke", run: withSub("revoke", runRemembered), args: "ID " + target, help: "Revoke a remembered allow."},
		}},
		{name: "rules", help: "Check, test and list rules.", subs: []*command{
			{name: "check", run: runRulesCheck, args: "FILE", help: "Validate a rules file: exit 0 valid, 1 not."},
			{name: "test", run: runRulesTest, args: "FILE [REQUEST.json]",
				help: "Show which rule matches a request (JSON from REQUEST.json, else stdin).\nA Bash or shell command is shown as its simple commands, each with the rule it matches."},
			{name: "list", run: listServerRules, args: "[--url URL] [--token T]", help: "Show the rules a running server has in force (an operator token)."},
		}},
		{name: "push", help: "Test push notifications.", subs: []*command{
			{name: "test", run: runPushTest, args: "[--database URL] [--base-url URL]", help: "Send one test notification to every registered device; exit 1 when any was not sent."},
		}},
		{name: "chat", help: "Link chat identities to operators.", subs: []*command{
			{name: "link", run: runChatLink, args: "[--url URL --token T | --database URL --operator NAME]",
				help: "Print a one-time code that links the chat identity which sends it to an operator."},
		}},
		{name: "reviewer", help: "Measure the advisory reviewer's model.", subs: []*command{
			{name: "eval", run: runReviewerEval, args: "--corpus FILE [--reviewer anthropic:MODEL|openai:MODEL] [--reviewer-base-url URL]",
				help: "Run the configured model over a labelled corpus of agent commands (JSON Lines)\nand print precision and recall per risk level. It decides nothing."},
		}},
		{name: "audit", help: "Export and verify the hash-chained audit trail.", subs: []*command{
			{name: "export", run: runAuditExport, args: "[--chain N] [--after SEQ] " + target, help: "Write the audit chains as JSON Lines."},
			{name: "verify", run: runAuditVerify, args: "[--database URL | --url URL --token T | --file EXPORT.jsonl] [--key PUBLIC_KEY] [--head HEAD.json]",
				help: "Check every link of the audit chains, and with --head that a head saved earlier is still in them."},
		}},
	}
}

// withSub runs a command that serves several subcommands with the
// subcommand's name first, as it reads them.
func withSub(name string, run runFunc) runFunc {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return run(ctx, append([]string{name}, args...), stdin, stdout, stderr)
	}
}

const buildNote = `The default database is gatehouse.db in $XDG_DATA_HOME/gatehouse (else
~/.local/share/gatehouse); serve creates it, other commands need --create.
token, session, remembered and audit act through a server's API instead, with an operator
token, when given --url/--token, or when GATEHOUSE_URL and GATEHOUSE_TOKEN are
set and neither --database nor GATEHOUSE_DATABASE is.
`

const buildName = "full build"
