package models

// Decision is what an operator (or a rule, or expiry) decides.
type Decision struct {
	Version int    // the version the decider saw
	Option  string // an offered option id; "" only for a free-text answer
	Answer  *string
	Note    *string
	By      string // "operator:name", "rule:NAME", "system"
	Via     string // api, page, expiry, rule:NAME
	// Voter is the operator deciding; a request with an approval policy counts
	// it as a vote. Nil for the rules and expiry, which no policy binds.
	Voter *Principal
	// Digest is the action digest of the version decided on. The store
	// computes it before the writer's turn (the write is conditional on that
	// version, so it cannot go stale); empty, it is computed in the turn.
	Digest string
	// Batch is the id of the batch the decision came in ("" for none): its
	// audit entries carry it, and it may only allow once (CheckBatch).
	Batch string
	// Group is the batch digest (Request.BatchDigest) of the group the
	// operator decided together on the page, "" for none: a request whose own
	// differs at the version decided is refused (CheckBatch), so one "allow
	// all" covers only requests that ask for the same action.
	Group string
	// Grant is the remembered allow taking this decision at filing; "" for
	// any other decider.
	Grant string
	// ChatUser is the chat identity that clicked, "slack:TEAM/USER" or
	// "telegram:USER" ("" off chat): several may be linked to one operator,
	// and the trail tells which one decided.
	ChatUser string
}
