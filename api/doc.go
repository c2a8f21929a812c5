// Package api holds every JSON shape that crosses Gatehouse's wire, once: the
// server (web) encodes them, the Go client (client) and the CLI decode them, and
// the OpenAPI document (package api/openapi) is generated from them, so a field added here
// reaches all four. It also holds the signature scheme of forwards, which the
// server signs and a runtime verifies.
//
// The types carry JSON only; the store's GORM structs are converted to them in
// web and are never serialised.
package api
