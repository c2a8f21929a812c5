package api

// Batch is the body of POST /v1/decisions: 1 to 100 decisions, each taken on
// its own on the version the operator saw, as POST /v1/requests/{id}/decide
// takes one. A batch only allows once or denies: it never saves a rule.
type Batch struct {
	Decisions []BatchDecision `json:"decisions"`
}

// BatchDecision is one decision of a batch.
type BatchDecision struct {
	ID       string  `json:"id"`
	Version  *int    `json:"version"`
	Decision *string `json:"decision"`
	Note     *string `json:"note,omitempty"`
}

// BatchAnswer is the answer of POST /v1/decisions: the batch id every audit
// entry of the batch carries, and one result per decision, in the order sent.
type BatchAnswer struct {
	BatchID string        `json:"batch_id"`
	Results []BatchResult `json:"results"`
}

// BatchResult is what became of one decision: Status 200 with the record as
// decided (or, under a two-person policy, voted on and still open), or the
// status a single decide would have answered with its error code and detail,
// and on a conflict the record as it stands (its current version).
type BatchResult struct {
	ID      string   `json:"id"`
	Status  int      `json:"status"`
	Request *Request `json:"request,omitempty"`
	Code    string   `json:"error,omitempty"`
	Detail  string   `json:"detail,omitempty"`
}
