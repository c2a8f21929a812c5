package openapi

import (
	"github.com/gatehousehq/gatehouse/models"
)

// enumFields names the shared enum each property takes ("Type.property"; a
// property of an embedded struct is found under the embedded type's name).
var enumFields = map[string]string{
	"Request.kind":         "Kind",
	"NewRequest.kind":      "Kind",
	"Request.status":       "Status",
	"Request.risk":         "Risk",
	"NewRequest.risk":      "Risk",
	"Option.effect":        "Effect",
	"Request.decided_via":  "DecidedVia",
	"Decision.decided_via": "DecidedVia",
	"Actuation.state":      "ActuationState",
	"NewToken.role":        "Role",
	"Token.role":           "Role",
	"ErrorBody.error":      "ErrorCode",
	"BatchResult.error":    "ErrorCode",
	"AgentBody.error":      "ErrorCode",
	"Review.status":        "ReviewStatus",
	"Review.risk":          "ReviewRisk",
	"Review.authorised":    "ReviewAuthorised",
}

// limits are the bounds models enforces, where a schema can say them.
var limits = map[string]map[string]any{
	"NewRequest.title":   {"minLength": 1, "maxLength": models.MaxTitle},
	"NewRequest.summary": {"maxLength": models.MaxSummary},
	"NewRequest.detail":  {"maxLength": models.MaxDetail},
	"NewRequest.options": {"maxItems": models.MaxOptions},
	"Patch.title":        {"minLength": 1, "maxLength": models.MaxTitle},
	"Patch.summary":      {"maxLength": models.MaxSummary},
	"Patch.detail":       {"maxLength": models.MaxDetail},
	"Patch.options":      {"maxItems": models.MaxOptions},
	"Option.id":          {"pattern": models.OptionIDPattern.String()},
	"Option.label":       {"minLength": 1, "maxLength": 100},
	"Option.saves":       {"maxLength": models.MaxSaves},
	"Decide.note":        {"maxLength": models.MaxNote},
	"Decide.answer":      {"maxLength": models.MaxAnswer},
	"Batch.decisions":    {"minItems": 1, "maxItems": 100},
}

// typeRules are a type's own rules beyond its properties.
var typeRules = map[string]any{
	// Options are required unless the kind needs none: the informational
	// kinds, and a question that takes a free answer.
	"NewRequest": map[string]any{"anyOf": []any{
		map[string]any{"required": []string{"options"}, "properties": map[string]any{
			"options": map[string]any{"type": "array", "items": ref("Option"), "minItems": 1}}},
		map[string]any{"required": []string{"kind"}, "properties": map[string]any{
			"kind": map[string]any{"type": "string", "enum": []string{models.KindWaiting, models.KindReview}}}},
		map[string]any{"required": []string{"kind", "allow_answer"}, "properties": map[string]any{
			"kind": map[string]any{"type": "string", "const": models.KindQuestion}, "allow_answer": map[string]any{"type": "boolean", "const": true}}},
	}},
}

var typeDescriptions = map[string]string{
	"Request": "A request as the API returns it: one moment where a person must decide. Times are UTC.",
	"NewRequest": "A filing. Options are required (1 to 16) unless kind is waiting or review, or kind is question with " +
		"allow_answer true. The filer's own token files it; an Idempotency-Key header makes a retry answer the same record.",
	"Option":    "One choice offered to the operator.",
	"ErrorBody": "Every error answer: a snake_case code and words a person can act on.",
	"Decide":    "A decision on the version the operator saw.",
	"Patch":     "An edit of an open, unsealed request: the version edited and the fields to change (absent ones stay).",
	"Wait":      "The record at top level, plus whether the wait ran out with the request still open.",
	"Decided":   "The record as decided, plus the remembered allow the decision stored, when it stored one.",
	"List":      "A page of requests, newest first.",
	"Suggestion": "A remembered allow proposed because operators kept allowing one command family, filed by one token in one project; " +
		"never for a family a denial, an approval policy, a rule or a high review touched there.",
	"SuggestedGrant":     "The remembered allow accepting the suggestion makes: the project scope, the exact command while every allow was of it, else the family.",
	"SuggestionAccepted": "The suggestion as accepted, and the remembered allow it made.",
	"Decision":           "One decision forwarded to a runtime; (requestId, version) identifies it and a runtime applies each at most once.",
}

// descriptions are the properties a client author needs explained.
var descriptions = map[string]string{
	"Request.id":             "The request's id (req_…).",
	"Request.version":        "Raised by every change; a decide names the version it was taken on.",
	"Request.title":          "One line: what the agent wants to do.",
	"Request.summary":        "A few sentences of context.",
	"Request.detail":         "Longer text (a diff, a log), shown folded.",
	"Request.tool":           "The tool the agent wants to run (Bash, Edit, …), when it is a tool call.",
	"Request.command":        "The exact command or call the decision applies to.",
	"Request.options":        "The choices offered, in order.",
	"Request.allow_answer":   "Whether the operator may answer in free text (a question).",
	"Request.default_option": "The option taken at expiry, if any.",
	"Request.decision":       "The id of the option chosen; null while open.",
	"Request.answer":         "The operator's free-text answer, when allowed and given.",
	"Request.note":           "The operator's guidance to the agent, or the filer's reason for a cancel.",
	"Request.source":         "Where the filing came from: session, broker, host or system.",
	"Request.source_ref":     "The filer's references (session, cwd, …), kept verbatim.",
	"Request.runtime_id":     "The runtime the decision is forwarded to, if any.",
	"Request.created_by":     "The token that filed it.",
	"Request.expires_at":     "When an open request expires.",
	"Request.resolved_at":    "When it stopped being open.",
	"Request.decided_by":     "Who decided (operator:NAME, rule:NAME or system).",
	"Request.sealed":         "A sealed request cannot be edited.",
	"Request.action_digest":  "SHA-256 of what the operator is shown; a runtime acts only on a decision whose decided_digest equals what it filed.",
	"Request.decided_digest": "The action_digest of the version decided on.",
	"Request.hold":           "Present while a rule holds the request open until a time.",
	"Request.approvals":      "The approval policy and its votes; absent when any one operator decides.",
	"Request.grant_id":       "The remembered allow that decided the request (decided_via remembered).",

	"NewRequest.title":          "One line: what the agent wants to do (1 to 200 bytes).",
	"NewRequest.summary":        "A few sentences of context (at most 2000 bytes).",
	"NewRequest.detail":         "Longer text shown folded (at most 32 KiB).",
	"NewRequest.options":        "The choices to offer: 1 to 16, ids unique.",
	"NewRequest.allow_answer":   "Let the operator answer in free text (a question).",
	"NewRequest.default_option": "An offered option id, taken at expiry.",
	"NewRequest.source":         "session (default), broker, host or system.",
	"NewRequest.source_ref":     "References kept verbatim (session, cwd, …); the session and project scopes of a remembered allow match on session and cwd.",
	"NewRequest.runtime_id":     "Forward the decision to this registered runtime.",
	"NewRequest.expires_in":     "Seconds until it expires (positive); absent: the server's default.",
	"NewRequest.sealed":         "Default true; only false makes the request editable with PATCH.",
	"NewRequest.approvers":      "An approval policy; it may only make the rules' policy stricter.",

	"Option.id":       "The option's id, unique within the request (a decide names it).",
	"Option.label":    "What the button says (1 to 100 bytes).",
	"Option.saves":    "What choosing it saves beyond this decision (a runtime's standing rule); shown on the card.",
	"Option.remember": "What choosing this allow also remembers in Gatehouse; shown on the card.",

	"Decide.version":  "The version decided on; another version answers 409 with the current record.",
	"Decide.decision": "An offered option id.",
	"Decide.answer":   "A free-text answer, where the request allows one.",
	"Decide.note":     "Guidance that reaches the agent.",
	"Decide.remember": "Keep this allow for later filings (an allow option only).",

	"ErrorBody.error":   "The error code.",
	"ErrorBody.detail":  "What went wrong, in words a person can act on.",
	"ErrorBody.request": "On a conflict, the record as it stands.",

	"SessionEvent.allow_answer": "false: the session cannot take a reply (an editor sends its prompts), so its waiting item offers no answer; absent: it can.",

	"Wait.timed_out":   "True when the wait ran out with the request still open.",
	"List.next_cursor": "Pass as ?cursor= for the next page; empty on the last page.",

	"Decision.requestId":      "The request decided.",
	"Decision.version":        "The version decided on.",
	"Decision.decision":       "The option chosen, or null when none was.",
	"Decision.decided_digest": "The action_digest of the version decided on: act only when it equals what you filed.",
	"Decision.cursor":         "Pull feed only: pass as ?after= to resume after this one (and acknowledge it).",
}
