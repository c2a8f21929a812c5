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

// ActionCanonicalBoth returns r's action digest canonical JSON by the direct
// writer (and whether it wrote it) and by the definition (by exclusion).
func ActionCanonicalBoth(r *Request) (direct []byte, ok bool, byExclusion []byte) {
	direct, ok = actionCanonicalDirect(r)
	return direct, ok, actionCanonicalByExclusion(r)
}
