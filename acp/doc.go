// Package acp puts Gatehouse between an editor and an Agent Client Protocol
// agent (JSON-RPC 2.0, one message a line, on stdio). The bridge relays every
// message both ways unchanged and files each session/request_permission the
// agent sends in Gatehouse too; the editor and the operator race, the first
// answer goes to the agent and the other side is withdrawn. It also names
// each session to Gatehouse and says when it waits for its person: a turn's
// end opens the session's waiting item with the agent's last message, a new
// prompt, a cancel or the agent's exit settles it.
//
// Files: message.go reads and writes the JSON-RPC lines; permission.go turns a
// permission request into the Gatehouse filing (options, command, who asks);
// bridge.go relays and keeps each direction's pending requests apart;
// operator.go files, waits and answers; withdraw.go cancels filings nobody
// needs any more; attention.go reports the sessions and waits for a reply;
// run.go starts the agent; headless.go is the bridge's own client when no
// editor is attached, which sends an operator's reply as the next prompt.
package acp
