// Package models is Gatehouse's domain: what an agent files and a person
// decides, with no database in it.
//
//   - Request, Option, NewRequest and their validation (request.go, text.go):
//     the record of one moment where a person must decide, and what a filer
//     may send.
//   - Request.API and Request.ActionDigest (request_api.go): the record as
//     the API shows it, and the digest every decision and vote is bound to.
//   - Approvers, Vote and Votes (approvals.go): a request's approval policy,
//     who may vote under it (MayVote) and how votes count.
//   - EscalationStep and Escalated (escalation.go): a policy's escalation
//     steps, and each as it fired; who may approve once they have
//     (EligibleGroups) and what a last step decides (EndOption).
//   - Availability and QuietHours (availability.go): an operator away, and
//     their quiet hours in a time zone.
//   - Decision (decision.go): what an operator, a rule or expiry decides.
//   - OnceOption, DenyOption and Decision.CheckBatch (batch.go): what a batch
//     of decisions may choose (allow once or deny, never an option that saves).
//   - Grant, NewGrant, Target and Digest (grant.go, digest.go): pending grants
//     for one exact HTTP request, and the digest that names it.
//   - Remembered (remember.go): an operator's allow kept for later filings
//     of one token, in a scope (session, project, runtime) until an end.
//   - Suggestion (suggestion.go): the tally of operators' allows of one command
//     family in one project, and the remembered allow it proposes.
//   - Principal, Token, Session, LoginTicket (token.go): who is asking.
//   - Device and Runtime (device.go, runtime.go): where alerts go, and the
//     processes that act on decisions.
//   - Change (change.go): the announcement made after a commit.
//   - Error and its codes (errors.go): the one error type every layer returns,
//     which the web layer maps to HTTP statuses.
//
// The persistence and the use-cases are in models/store; the policy engine is
// models/rules. This package imports neither, and nothing that opens a
// database (TestLayout holds it to that).
//
// The domain structs keep their GORM struct tags: they are plain strings that
// cost no import, and a separate row type for every table would double each
// struct and the copying between them for no gain. JSON columns use GORM's
// serializer:json tag rather than a driver.Valuer, so nothing here imports
// database/sql; the store's hand-written SQL writes them the same way.
package models
