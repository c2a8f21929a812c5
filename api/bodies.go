package api

// Health is the answer of GET /healthz while the service can reach its database.
type Health struct {
	Status string `json:"status"`
}

// Empty is the body of a POST that takes no fields (cancel, dismiss): "{}" or
// none.
type Empty struct{}
