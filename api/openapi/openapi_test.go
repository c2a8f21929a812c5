package openapi_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/api/openapi"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// TestOpenAPIIsValid checks the generated document against the OpenAPI 3.1
// schema; web's test checks real answers against it.
func TestOpenAPIIsValid(t *testing.T) {
	b, err := openapi.Document("http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s (%v)", e.Message, e.Reason, e.SchemaValidationErrors)
		}
	}
}
