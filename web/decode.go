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
//
// It runs on every body, so a plain ASCII name (no escape, the common case) is
// read as raw bytes and folded into a reused buffer; only the name a map
// keeps is allocated. Any other name is unquoted and folded in full, as the
// two agree on ASCII.
func uniqueKeys(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	var objects []map[string]bool // the names seen in each open object
	var fold []byte
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			return nil // the end, or a fault the decoder explains
		}
		if kind == '"' && nameDue(dec) {
			raw, err := dec.ReadValue()
			if err != nil {
				return duplicateName(err)
			}
			name, ok := foldASCII(fold[:0], raw)
			var display string
			if ok {
				fold = name
			} else {
				u, _ := jsontext.AppendUnquote(nil, raw) // valid: the decoder read it
				display = string(u)
				fold = append(fold[:0], strings.ToLower(strings.ToUpper(display))...)
			}
			seen := objects[len(objects)-1]
			if seen[string(fold)] {
				if ok {
					display = string(raw[1 : len(raw)-1])
				}
				return models.Errorf(models.ECodeInvalid, "the key %q appears twice under another case (at %s); send each key once, spelled exactly", display, dec.StackPointer())
			}
			seen[string(fold)] = true
			continue
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return duplicateName(err)
		}
		switch tok.Kind() {
		case '{':
			objects = append(objects, map[string]bool{})
		case '[':
			objects = append(objects, nil)
		case '}', ']':
			objects = objects[:len(objects)-1]
		}
	}
}

// duplicateName is uniqueKeys' answer to a read that failed: the decoder's
// own duplicate (the same name twice, exactly) refused; any other fault is
// left to the decoder that follows, which explains it.
func duplicateName(err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && errors.Is(err, jsontext.ErrDuplicateName) {
		return models.Errorf(models.ECodeInvalid, "the key %q appears twice (at %s); send each key once", se.JSONPointer.LastToken(), se.JSONPointer)
	}
	return nil
}

// nameDue reports whether the next token is an object member's name: in an
// object the decoder's stack length is even before a name.
func nameDue(dec *jsontext.Decoder) bool {
	kind, n := dec.StackIndex(dec.StackDepth())
	return kind == '{' && n%2 == 0
}

// foldASCII appends the quoted name raw, lower-cased, to dst, when it is
// ASCII without an escape; ok false otherwise.
func foldASCII(dst, raw []byte) (out []byte, ok bool) {
	for _, c := range raw[1 : len(raw)-1] {
		switch {
		case c == '\\' || c >= 0x80:
			return dst, false
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
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
