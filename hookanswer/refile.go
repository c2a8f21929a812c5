package hookanswer

import "errors"

// maxRefile bounds how often a PermissionRequest is filed again when its key
// names a request that already ended (the same command twice in one prompt).
const maxRefile = 3

// ErrAllSettled is FileFresh's error when every key it tried named a record
// that had already ended.
var ErrAllSettled = errors.New("every filing answered an earlier, settled request")

// FileFresh files under key and returns this call's record. A PermissionRequest
// carries no tool_use_id, so its key may name a record an earlier call of the
// same command settled: "Allow once" was for that call, so the request is filed
// again under a key chained to the old record's id. keyedByCall says the key
// names exactly one tool call, so whatever it names is this call's. file files
// under a key; settled reports a record that ended and its id.
func FileFresh[R any](key string, keyedByCall bool, file func(key string) (R, bool, error), settled func(R) (bool, string)) (R, error) {
	for range maxRefile {
		r, created, err := file(key)
		if err != nil || created || keyedByCall {
			return r, err
		}
		done, id := settled(r)
		if !done {
			return r, nil
		}
		key += ":" + id
	}
	var none R
	return none, ErrAllSettled
}
