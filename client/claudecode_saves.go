package client

import (
	"encoding/json"
	"strings"
)

// claudeSuggestion is the part of a Claude Code permission update that says
// what it would save.
type claudeSuggestion struct {
	Type  string `json:"type"`
	Rules []struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent"`
	} `json:"rules"`
	Behavior    string   `json:"behavior"`
	Mode        string   `json:"mode"`
	Directories []string `json:"directories"`
	Destination string   `json:"destination"`
}

// settingsFile names where Claude Code writes a project rule.
var settingsFile = map[string]string{
	"localSettings":   "project settings (.claude/settings.local.json)",
	"projectSettings": "shared project settings (.claude/settings.json)",
}

// savesText says in words what "Allow for project" saves, from the same
// suggestions the hook hands back to Claude Code: "Bash(git push *) to project
// settings (.claude/settings.local.json)". The operator sees the standing
// rule, not only the label.
func savesText(suggestions []json.RawMessage) string {
	var parts []string
	for _, raw := range suggestions {
		var s claudeSuggestion
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		var what []string
		switch s.Type {
		case "addRules", "replaceRules":
			for _, r := range s.Rules {
				rule := r.ToolName
				if r.RuleContent != "" {
					rule += "(" + r.RuleContent + ")"
				}
				what = append(what, rule)
			}
			if s.Behavior != "" && s.Behavior != "allow" {
				what = append(what, "as "+s.Behavior)
			}
		case "setMode":
			what = append(what, "permission mode "+s.Mode)
		case "addDirectories":
			what = append(what, "access to "+strings.Join(s.Directories, ", "))
		default:
			what = append(what, s.Type)
		}
		dest := settingsFile[s.Destination]
		if dest == "" {
			dest = s.Destination
		}
		parts = append(parts, strings.Join(what, ", ")+" to "+dest)
	}
	return truncate(strings.Join(parts, "; "), 500)
}
