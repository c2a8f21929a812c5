package web

import "github.com/gatehousehq/gatehouse/models"

// watch returns a channel that receives the next change of id (or a
// RuntimeKey), and a stop function to call when the caller no longer waits.
func (s *Server) watch(id string) (<-chan models.Change, func()) {
	ch := make(chan models.Change, 1) // the one send never blocks the announcer
	stop := s.watcher.WatchFunc(id, func(c models.Change) { ch <- c })
	return ch, func() { stop() }
}

// recordOf is the committed record a change of request id carries, as the
// caller's own copy, or nil when the change carries none and the caller must
// read it.
func recordOf(ch models.Change, id string) *models.Request {
	if ch.Record == nil || ch.RequestID != id {
		return nil
	}
	r := *ch.Record
	return &r
}
