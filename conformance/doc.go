// Package conformance holds no code: its tests are the conformance table that
// every surface an operator decides from runs (the page, the API, batches,
// Slack, Telegram, the ACP and Codex bridges). A package of its own because
// it reaches all of them, through their public doors and exported test kits,
// and none of them may import the others.
package conformance
