package openapi_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api/openapi"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// errorStatus stands in for web's table (web's tests check the real one).
var errorStatus = map[string]int{"invalid_input": 400, "not_found": 404, "unavailable": 503, "internal": 500}

func document(t *testing.T) []byte {
	t.Helper()
	b, err := openapi.Document(openapi.Server{BaseURL: "http://127.0.0.1:8080", ErrorStatus: errorStatus, SessionCookie: "gatehouse_session"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenAPIIsValid checks the generated document against the OpenAPI 3.1
// schema; web's test checks real answers against it.
func TestOpenAPIIsValid(t *testing.T) {
	doc, err := libopenapi.NewDocument(document(t))
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

// modelConstants are the string constants models declares whose names start
// with prefix (KindApproval, KindQuestion, … for "Kind"), read from its source.
func modelConstants(t *testing.T, prefix string) []string {
	t.Helper()
	files, err := filepath.Glob("../../models/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						out = append(out, s)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("models declares no %s constants", prefix)
	}
	slices.Sort(out)
	return out
}

// TestEnumsAreModelsConstants: each enum of the document is exactly the set
// of constants models declares for it, so a kind, status or effect added
// there cannot be missing here.
func TestEnumsAreModelsConstants(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum  []string `json:"enum"`
				AnyOf []struct {
					Enum    []string `json:"enum"`
					Pattern string   `json:"pattern"`
				} `json:"anyOf"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	enum := func(name string) []string {
		e := slices.Clone(doc.Components.Schemas[name].Enum)
		slices.Sort(e)
		return e
	}
	for schema, prefix := range map[string]string{"Kind": "Kind", "Status": "Status", "Effect": "Effect", "ActuationState": "Actuation", "Role": "Role"} {
		t.Run(schema, func(t *testing.T) {
			if got, want := enum(schema), modelConstants(t, prefix); !slices.Equal(got, want) {
				t.Fatalf("%s enum %v, models declares %v", schema, got, want)
			}
		})
	}
	t.Run("Risk", func(t *testing.T) {
		want := slices.Sorted(maps.Keys(models.Risks))
		if got := enum("Risk"); !slices.Equal(got, want) {
			t.Fatalf("Risk enum %v, models.Risks %v", got, want)
		}
	})
	t.Run("DecidedVia", func(t *testing.T) {
		via := doc.Components.Schemas["DecidedVia"].AnyOf
		if len(via) != 2 {
			t.Fatalf("DecidedVia: %+v", via)
		}
		for _, c := range modelConstants(t, "Via") {
			if !slices.Contains(via[0].Enum, c) {
				t.Errorf("decided_via %q (models) is not in the enum %v", c, via[0].Enum)
			}
		}
		rule := regexp.MustCompile(via[1].Pattern)
		for _, v := range []string{models.ViaRule("ship-it"), models.ViaRuleWindow("ship-it")} {
			if !rule.MatchString(v) || slices.Contains(via[0].Enum, v) {
				t.Errorf("decided_via %q is not matched by the rule pattern %q alone", v, via[1].Pattern)
			}
		}
	})
}

// TestEveryOperationIsTagged: a route added under a new prefix needs its tag
// in operation.go's table (generators group by tag; the linters require one).
func TestEveryOperationIsTagged(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Tags        []string `json:"tags"`
			Description string   `json:"description"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	for path, methods := range doc.Paths {
		for method, op := range methods {
			if len(op.Tags) != 1 || op.Tags[0] == "" {
				t.Errorf("%s %s has no tag: add its prefix to tags in operation.go", method, path)
			}
			if op.Description == "" {
				t.Errorf("%s %s has no description", method, path)
			}
		}
	}
}

// TestHookRoutesDeclareNoErrorStatus: a hook route answers every outcome
// that is not a decision with the hook's own "no decision" and a 2xx (an
// agent's CLI reads any other status as "go on"), so its operation declares
// only 2xx answers.
func TestHookRoutesDeclareNoErrorStatus(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	hooks := 0
	for path, methods := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/hooks/") {
			continue
		}
		for method, op := range methods {
			hooks++
			for status := range op.Responses {
				if !strings.HasPrefix(status, "2") {
					t.Errorf("%s %s declares %s", method, path, status)
				}
			}
		}
	}
	if hooks == 0 {
		t.Fatal("the document has no hook route")
	}
}
