// Package park parks a long-poll's hijacked connection in epoll until a
// change or its timeout: the one job of the request wait route
// (GET /v1/requests/{id}/wait) that it does not do itself. The route reads,
// authorises and takes a waiter slot; then a Wait it started with Watch (the
// watch comes before the read, so no change in between is missed) either
// parks, and net/http lets go of the connection, or tells the route to wait
// the ordinary way. It knows nothing of Echo: it takes an
// http.ResponseWriter, a request's record, and the reads and encodings the
// server gives it (Config).
//
// The files, by job:
//
//   - park.go: the Parker and a Wait's life: Watch, Park, an answer on a
//     change, at the timeout or at Close, a failed read, a client gone.
//   - sets.go: the waits on one request share one watch.
//   - release.go: one decision's answers to many waits, inline and on a few
//     workers, each answer built once.
//   - conn.go, fd_linux.go: a parked connection, written once and closed;
//     on Linux the socket out of Go's poller.
//   - hangup.go, hangup_linux.go, hangup_other.go: noticing a client that
//     goes away, with one epoll set on Linux, a read per connection elsewhere.
//   - settle.go: giving a burst's memory back to the OS once parking is quiet.
package park
