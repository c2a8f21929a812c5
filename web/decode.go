package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeStrict decodes one JSON value into v: unknown fields, repeated keys
// and trailing data are refused, and no error names a Go type.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return models.Errorf(codeInvalidJSON, "the body is empty; send a JSON object")
	}
	if err := uniqueKeys(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return models.Errorf(codeInvalidJSON, "%s", decodeDetail(err))
	}
	if dec.More() {
		return models.Errorf(codeInvalidJSON, "the body has data after the JSON object")
	}
	return nil
}

// uniqueKeys refuses an object with a key twice: encoding/json keeps the last,
// so what a reviewer reads and what is stored could differ.
func uniqueKeys(body []byte) error {
	_, err := jsontext.NewDecoder(bytes.NewReader(body)).ReadValue()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && errors.Is(err, jsontext.ErrDuplicateName) {
		name := se.JSONPointer.LastToken()
		return models.Errorf(models.ECodeInvalid, "the key %q appears twice (at %s); send each key once", name, se.JSONPointer)
	}
	return nil // other faults are the decoder's to explain
}

// decodeDetail says what is wrong with a body in the API's words.
func decodeDetail(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return "the body must be a JSON object"
		}
		return field + " must be " + jsonKind(te.Type)
	case errors.As(err, &se):
		return "the body is not valid JSON (near byte " + strconv.FormatInt(se.Offset, 10) + ")"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is not valid JSON: it ends too early"
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + f + " (see GET /openapi.json for this route's fields)"
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
