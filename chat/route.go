package chat

import (
	"slices"

	"github.com/gatehousehq/gatehouse/models"
)

// RouteOf names where r goes: every destination of every route that
// matches it, each once, in the file's order. A request no
// longer open goes nowhere new.
func (c *Config) RouteOf(r *models.Request, runtimeName string) []string {
	if !r.Open() {
		return nil
	}
	var out []string
	for _, rt := range c.Routes {
		if !rt.matches(r, runtimeName) {
			continue
		}
		for _, to := range rt.To {
			if !slices.Contains(out, to) {
				out = append(out, to)
			}
		}
	}
	return out
}

func (rt Route) matches(r *models.Request, runtimeName string) bool {
	oneOf := func(list []string, vals ...string) bool {
		if len(list) == 0 {
			return true
		}
		for _, v := range vals {
			if v != "" && slices.Contains(list, v) {
				return true
			}
		}
		return false
	}
	runtimeID := ""
	if r.RuntimeID != nil {
		runtimeID = *r.RuntimeID
	}
	// Who may approve now: an escalation step that widened the policy routes
	// the request to the new approvers' destinations too.
	groups := r.EligibleGroups()
	return oneOf(rt.Kind, r.Kind) && oneOf(rt.Risk, r.Risk) && oneOf(rt.Runtime, runtimeID, runtimeName) &&
		oneOf(rt.Group, groups...) && oneOf(rt.Tool, r.Tool)
}
