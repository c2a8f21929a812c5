package openapi

import (
	"maps"
	"slices"

	"github.com/gatehousehq/gatehouse/models"
)

// The closed sets of values the wire carries, from models' constants (their
// test checks each list against the constants declared there, so a value
// added in models reaches the document or fails the test).
var (
	kinds = []string{models.KindApproval, models.KindQuestion, models.KindPermission, models.KindWaiting,
		models.KindReview, models.KindFailure, models.KindSetup}
	statuses = []string{models.StatusOpen, models.StatusResolved, models.StatusExpired, models.StatusDismissed, models.StatusCancelled}
	effects  = []string{models.EffectAllow, models.EffectDeny}
	// actuations are what became of a forward to the runtime.
	actuations = []string{models.ActuationNone, models.ActuationPending, models.ActuationDelivered,
		models.ActuationConflict, models.ActuationFailed}
	roles = []string{models.RoleOperator, models.RoleRuntime, models.RoleAgent}
	// vias are decided_via's fixed values; the chat surfaces name themselves
	// (package chat), and a rule's decision is "rule:NAME" or "rule:NAME (window)".
	vias = []string{models.ViaAPI, models.ViaPage, models.ViaExpiry, models.ViaRemembered, models.ViaEscalation, models.ViaMovedOn, models.ViaEnded, models.ViaRetired, "slack", "telegram"}
)

// risks are the values models accepts, in the order a person reads them.
func risks() []string {
	order := map[string]int{"low": 0, "medium": 1, "high": 2}
	r := slices.Collect(maps.Keys(models.Risks))
	slices.SortFunc(r, func(a, b string) int { return order[a] - order[b] })
	return r
}

// reviewLevels are a review answer's values, in the order a person reads them.
func reviewLevels(set map[string]bool) []string {
	order := map[string]int{"unknown": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
	r := slices.Collect(maps.Keys(set))
	slices.SortFunc(r, func(a, b string) int { return order[a] - order[b] })
	return r
}

// viaRulePattern matches models.ViaRule and models.ViaRuleWindow.
const viaRulePattern = `^rule:.+$`

// enumSchemas are the shared schemas of the closed sets; errorCodes is the
// server's table of codes (web's statusOf).
func enumSchemas(errorCodes []string) map[string]any {
	enum := func(desc string, values []string) map[string]any {
		return map[string]any{"type": "string", "description": desc, "enum": values}
	}
	return map[string]any{
		"Kind": enum("What the request asks: approval, question and permission wait for a decision; waiting and review "+
			"are informational (no options needed, retired by dismissal); failure and setup report a problem.", kinds),
		"Status": enum("Only open is not final.", statuses),
		"Risk":   enum("The filer's judgement of the risk; absent when it gave none.", risks()),
		"Effect": enum("What choosing the option does to the action: allow or deny it. An option without an effect "+
			"(a plain answer) does neither.", effects),
		"ActuationState": enum("What became of the forward to the runtime.", actuations),
		"Role":           enum("A token's role: operators decide, agents and runtimes file.", roles),
		"DecidedVia": map[string]any{
			"description": "How the decision was taken: api (a bearer token), page (the operator's page), a chat surface, " +
				"expiry (the default option at expiry), remembered (a remembered allow), escalation (the last escalation step), " +
				"or rule:NAME / rule:NAME (window) for a rule.",
			"anyOf": []any{
				map[string]any{"type": "string", "enum": vias},
				map[string]any{"type": "string", "pattern": viaRulePattern},
			},
		},
		"ReviewStatus": enum("pending: the reviewer was asked; done: it answered; no_opinion: it timed out, failed, refused, "+
			"answered out of shape or was over its daily cap.", []string{models.ReviewPending, models.ReviewDone, models.ReviewNoOpinion}),
		"ReviewRisk": enum("The advisory reviewer's judgement of the action's risk.", reviewLevels(models.ReviewRisks)),
		"ReviewAuthorised": enum("How clearly the session's user prompts asked for the action.",
			reviewLevels(models.ReviewAuthorised)),
		"ErrorCode": enum("Every error code the server answers; each has one HTTP status.", errorCodes),
	}
}
