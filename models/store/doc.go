// Package store keeps Gatehouse's records on SQLite or PostgreSQL and runs its
// use-cases: filing, deciding, voting, expiring, forwarding, alerting. Store is
// its one entry point; the domain types it reads and writes are in models, and
// it asks models/rules what the rules say.
//
// Files by job:
//
//   - Opening and migrating: db.go (OpenDB, OpenReadDB, Migrate), migratelock.go
//     (one migrator at a time on PostgreSQL), sqlite_dialect.go.
//   - The Store and its transactions: store.go; groupcommit.go and batch_tx.go
//     (SQLite: concurrent writes share one commit); hot_sql.go, request_sql.go
//     and stmtcache.go (hand SQL on the hot paths, prepared once).
//   - Requests: requests.go (file, read, list, edit, withdraw), decide.go
//     (decide, resolve, expire), decide_each.go (a batch: each decided on its own
//     under one batch id), votes.go (a vote under an approval policy),
//     holds.go and holdsweeper.go (rule hold windows), rules_apply.go (the
//     rules' verdict applied and audited), open_cache.go (open requests kept
//     in memory for deciders), escalate.go and escalatesweeper.go (an
//     approval policy's escalation steps, fired on time).
//   - Pending grants: grants.go.
//   - Remembered allows: remember.go (stored with a decision, read and
//     used at filing, listed and revoked, each audited).
//   - Suggestions: suggest.go (operators' allows of a family counted in each
//     decision's transaction, the remembered allow proposed, accepted or
//     dismissed, each audited).
//   - Principals: tokens.go, tokens_audit.go and sessions.go (tokens, their
//     audit entries, logins, sessions),
//     authcache.go (authentication cached until a revocation).
//   - Runtimes and forwarding: runtimes.go, forward.go, forward_fair.go (the
//     outbox of decisions to send, claimed fairly across runtimes), keys.go
//     (the key that signs forwards).
//   - Devices and alerts: devices.go, push_claims.go, push_keys.go (VAPID),
//     availability.go (operators away and their quiet hours).
//   - The audit chains: audit.go, audit_chain.go (eight chains, each with
//     its own head row; each entry hashes the one before on its chain),
//     audit_edit.go, audit_head.go (one signed head over every chain),
//     audit_verify.go (ChainVerifier).
//   - The change bus: changes.go (Changes: in-process fan-out and waiters),
//     pgannounce.go (LISTEN/NOTIFY across PostgreSQL replicas), sweeper.go
//     (expiry).
//
// storetest opens a real database per test: a SQLite file, and PostgreSQL
// when GATEHOUSE_TEST_POSTGRES names a server.
package store
