package api

// CanonicalBoth returns e's canonical form by the direct writer and by the
// general canonicaliser, for the test that holds them to the same bytes.
func CanonicalBoth(e AuditEntry) (direct, general []byte, directErr, generalErr error) {
	direct, directErr = e.canonical()
	general, generalErr = e.canonicalJCS()
	return direct, general, directErr, generalErr
}

// ServerAssigned lists the record's members the action digest leaves out.
func ServerAssigned() []string { return serverAssigned }
