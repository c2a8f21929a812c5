package api

// CanonicalBoth returns e's canonical form by the direct writer and by the
// general canonicaliser, for the test that holds them to the same bytes.
func CanonicalBoth(e AuditEntry) (direct, general []byte, directErr, generalErr error) {
	direct, directErr = e.canonical()
	general, generalErr = e.canonicalJCS()
	return direct, general, directErr, generalErr
}

// ActionCanonicalBoth returns a's canonical form by the direct writer and by
// json.Marshal plus the general canonicaliser.
func ActionCanonicalBoth(a Action) (direct, general []byte) {
	return actionCanonical(a), actionCanonicalJCS(a)
}
