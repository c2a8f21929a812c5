//go:build !agent

package main

// serverCommands are the commands that run the server or open its database.
func serverCommands() map[string]command {
	cmds := map[string]command{
		"serve":   runServe,
		"token":   runToken,
		"session": runSession,
		"rules":   runRules,
		"push":    runPush,
		"audit":   runAudit,
		"chat":    runChat,
		"away":    runAway,
	}
	cmds["remembered"] = runRemembered
	return cmds
}

const serverUsage = `  gatehouse serve [--addr 127.0.0.1:8080] [--database sqlite:PATH|postgres://…] [--base-url URL] [--rules FILE] [--chat FILE]
  gatehouse token create --role operator|runtime|agent --name NAME [--groups G1,G2] [--for OPERATOR] [--database URL [--create] | --url URL --token T]
  gatehouse token list [--database URL | --url URL --token T]
  gatehouse token revoke ID|NAME [--database URL | --url URL --token T]
  gatehouse session list|revoke ID [--database URL | --url URL --token T]
  gatehouse away on [--until 2h|RFC3339] | off | status | quiet START END TZ | quiet off [--url URL --token T]
  gatehouse remembered list [--all] | revoke ID [--database URL | --url URL --token T]
  gatehouse rules check FILE
  gatehouse rules test FILE [REQUEST.json]   (the request on stdin when not named)
  gatehouse rules list [--url URL] [--token T]
  gatehouse push test [--database URL] [--base-url URL]
  gatehouse audit export [--database URL | --url URL --token T] [--after SEQ]
  gatehouse chat link [--url URL --token T | --database URL --operator NAME]
  gatehouse audit verify [--database URL | --url URL --token T | --file EXPORT.jsonl] [--key PUBLIC_KEY] [--head HEAD.json]
`

const buildNote = `The default database is gatehouse.db in $XDG_DATA_HOME/gatehouse (else
~/.local/share/gatehouse); serve creates it, other commands need --create.
token, session, remembered and audit act through a server's API instead, with an operator
token, when given --url/--token, or when GATEHOUSE_URL and GATEHOUSE_TOKEN are
set and neither --database nor GATEHOUSE_DATABASE is.
`
