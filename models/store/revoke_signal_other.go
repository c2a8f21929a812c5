//go:build !unix

package store

import "errors"

// mapRevokes: without shared mappings the epoch is read from the database
// at each call (sqliteEpoch).
func mapRevokes(string) (*revokeSignal, error) {
	return nil, errors.New("no shared mapping on this system")
}
