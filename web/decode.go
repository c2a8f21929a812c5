package web

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeStrict is the one decoder of every body Gatehouse reads (REST, MCP's
// tool arguments, the hooks, the gate's grants): member names match exactly,
// case included; a name repeated under any case folding, invalid UTF-8, an
// unknown member and trailing data are refused, and no error names a Go type.
// encoding/json would match "COMMAND" to command and keep the last of two, so
// what a reviewer reads and what is stored could differ.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return models.Errorf(codeInvalidJSON, "the body is empty; send a JSON object")
	}
	if err := uniqueKeys(body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v, json.RejectUnknownMembers(true)); err != nil {
		return models.Errorf(codeInvalidJSON, "%s", decodeDetail(err))
	}
	return nil
}

// DecodeStrict is decodeStrict for the command line (`rules test`), so a
// request it reads is refused exactly as the API would refuse it.
func DecodeStrict(body []byte, v any) error { return decodeStrict(body, v) }

// uniqueKeys refuses an object with a member name twice under case folding
// ("command" and "COMMAND", "kind" and "\u212aind"), at any depth.
func uniqueKeys(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	var objects []map[string]bool // the names seen in each open object
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			return nil // the end, or a fault the decoder explains
		}
		tok, err := dec.ReadToken()
		if err != nil {
			var se *jsontext.SyntacticError
			if errors.As(err, &se) && errors.Is(err, jsontext.ErrDuplicateName) {
				return models.Errorf(models.ECodeInvalid, "the key %q appears twice (at %s); send each key once", se.JSONPointer.LastToken(), se.JSONPointer)
			}
			return nil
		}
		switch tok.Kind() {
		case '{':
			objects = append(objects, map[string]bool{})
			continue
		case '[':
			objects = append(objects, nil)
			continue
		case '}', ']':
			objects = objects[:len(objects)-1]
			continue
		}
		// A string in an object where a name is due is a name.
		if tok.Kind() == '"' && isName(dec) {
			folded := strings.ToLower(strings.ToUpper(tok.String()))
			if objects[len(objects)-1][folded] {
				return models.Errorf(models.ECodeInvalid, "the key %q appears twice under another case (at %s); send each key once, spelled exactly", tok.String(), dec.StackPointer())
			}
			objects[len(objects)-1][folded] = true
		}
	}
}

// isName reports whether the token just read was an object member's name: in
// an object the decoder's stack length is odd after a name, even after a value.
func isName(dec *jsontext.Decoder) bool {
	kind, n := dec.StackIndex(dec.StackDepth())
	return kind == '{' && n%2 == 1
}

// decodeDetail says what is wrong with a body in the API's words.
func decodeDetail(err error) string {
	var se *json.SemanticError
	var xe *jsontext.SyntacticError
	switch {
	case errors.As(err, &se) && errors.Is(err, json.ErrUnknownName):
		return "unknown field " + strconv.Quote(se.JSONPointer.LastToken()) + " (see GET /openapi.json for this route's fields; names are case-sensitive)"
	case errors.As(err, &se):
		field := strings.TrimPrefix(string(se.JSONPointer), "/")
		if field == "" {
			return "the body must be a JSON object"
		}
		field = strings.ReplaceAll(field, "/", ".")
		if se.GoType != nil {
			return field + " must be " + jsonKind(se.GoType)
		}
		return field + " is not valid"
	case errors.As(err, &xe) && strings.Contains(xe.Err.Error(), "invalid UTF-8"): // the sentinel is internal to the module
		return "the body holds invalid UTF-8 (at " + string(xe.JSONPointer) + "); send UTF-8 text"
	case errors.As(err, &xe):
		return "the body is not valid JSON (near byte " + strconv.FormatInt(xe.ByteOffset, 10) + ")"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is not valid JSON: it ends too early"
	}
	return "the body is not valid JSON for this route"
}

// jsonKind names a Go type as JSON calls it.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a different JSON type"
}

// maxSeconds bounds a count of seconds before it becomes a time.Duration
// (whose nanoseconds overflow past about 292 years): 18446744074 s must be an
// error, not an expiry 0.29 s away.
const maxSeconds = 1<<31 - 1

// seconds range-checks a whole number of seconds from a body.
func seconds(field string, v int64) (time.Duration, error) {
	if v <= 0 || v > maxSeconds {
		return 0, invalid("%s must be a whole number of seconds from 1 to %d", field, maxSeconds)
	}
	return time.Duration(v) * time.Second, nil
}
