package api

import "time"

// Rules is the answer of GET /v1/rules: the rules in force, first match wins.
type Rules struct {
	File     string     `json:"file"`
	Digest   string     `json:"digest"`
	LoadedAt *time.Time `json:"loaded_at"`
	Rules    []Rule     `json:"rules"`
}

// Rule is one rule as the API shows it.
type Rule struct {
	Name          string    `json:"name"`
	Line          int       `json:"line"`
	Match         RuleMatch `json:"match"`
	Action        string    `json:"action"`
	Option        string    `json:"option,omitempty"`
	Window        string    `json:"window,omitempty"`
	WindowSeconds int64     `json:"window_seconds,omitempty"`
	Then          string    `json:"then,omitempty"`
	Summary       string    `json:"summary"` // the rule in words
}

// RuleMatch is what a rule matches on.
type RuleMatch struct {
	Kind    []string `json:"kind,omitempty"`
	Runtime []string `json:"runtime,omitempty"`
	Tool    []string `json:"tool,omitempty"`
	Risk    []string `json:"risk,omitempty"`
	Command string   `json:"command,omitempty"`
	Text    string   `json:"text,omitempty"`
}
