package client

import "github.com/gatehousehq/gatehouse/api"

// DecidedOption is the option id the operator chose on the record a client
// filed, or "" when it ended without one (expired, cancelled, dismissed) or
// the decision was made on another version than the one filed: only a
// decision whose digest is the filing's counts. filed is the record the
// filing answered; final is the same record, settled.
func DecidedOption(filed, final *api.Request) string {
	if filed == nil || final == nil || final.ID != filed.ID || final.Status != "resolved" || final.Decision == nil {
		return ""
	}
	if !final.DecidedOn(filed.ActionDigest) {
		return "" // decided on another version than the one filed
	}
	for _, o := range filed.Options {
		if o.ID == *final.Decision {
			return o.ID
		}
	}
	return ""
}
