package api

// Health is the answer of GET /healthz while the service can reach its database.
type Health struct {
	Status string `json:"status"`
}

// Empty is the body of a POST that takes no fields (dismiss): "{}" or none.
type Empty struct{}

// Cancel is the body of POST /v1/requests/{id}/cancel: "{}", none, or the
// filer's reason, which the record keeps as its note.
type Cancel struct {
	Reason *string `json:"reason,omitempty"`
}
