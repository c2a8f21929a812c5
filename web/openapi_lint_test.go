package web_test

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// openAPIModulesEnvVar names a node_modules holding @redocly/cli and
// @stoplight/spectral-cli (.ci/run installs them from .ci/openapi, pinned).
const openAPIModulesEnvVar = "GATEHOUSE_TEST_OPENAPI_NODE_MODULES"

// TestOpenAPILint runs the linters client authors run on the document, as
// GET /openapi.json serves it: Redocly's recommended ruleset and Spectral's
// spectral:oas. Any error fails; warnings are logged.
func TestOpenAPILint(t *testing.T) {
	modules := os.Getenv(openAPIModulesEnvVar)
	if modules == "" {
		testkit.Skipf(t, "%s is not set: no @redocly/cli or @stoplight/spectral-cli to run (npm ci --prefix .ci/openapi, then %s=.ci/openapi/node_modules)", openAPIModulesEnvVar, openAPIModulesEnvVar)
	}
	e := webtest.New(t, "sqlite", web.Config{})
	status, body := e.Do(http.MethodGet, "/openapi.json", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", status, body)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "redocly.yaml"), []byte("extends:\n  - recommended\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".spectral.yaml"), []byte("extends: [\"spectral:oas\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, tool string, args ...string) {
		bin := filepath.Join(modules, ".bin", tool)
		if _, err := os.Stat(bin); err != nil {
			testkit.Skipf(t, "%s has no %s: %v", modules, tool, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		// No telemetry and no update check: the run stays on this machine.
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
		}
		t.Logf("%s:\n%s", tool, out)
	}
	t.Run("redocly recommended", func(t *testing.T) {
		run(t, "redocly", "lint", "--config", "redocly.yaml", "--format", "codeframe", "openapi.json")
	})
	t.Run("spectral oas", func(t *testing.T) {
		// --fail-severity error: warnings are reported, errors fail.
		run(t, "spectral", "lint", "--ruleset", ".spectral.yaml", "--fail-severity", "error", "openapi.json")
	})
}

// TestOpenAPIErrorCodes: every error code the server declares has a status in
// its one table, and the document's ErrorCode enum and per-status answers are
// that table exactly.
func TestOpenAPIErrorCodes(t *testing.T) {
	declared := errorConstants(t)
	t.Run("every declared code has a status", func(t *testing.T) {
		for _, code := range declared {
			if _, ok := web.ErrorStatus[code]; !ok {
				t.Errorf("%q is declared but has no status in the table (it would answer 500)", code)
			}
		}
		for code := range web.ErrorStatus {
			if !slices.Contains(declared, code) {
				t.Errorf("%q is in the table but declared nowhere as a constant", code)
			}
		}
	})
	e := webtest.New(t, "sqlite", web.Config{})
	_, body := e.Do(http.MethodGet, "/openapi.json", "", nil)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum []string `json:"enum"`
			} `json:"schemas"`
			Responses map[string]struct {
				Content struct {
					JSON struct {
						Schema struct {
							AllOf []struct {
								Properties struct {
									Error struct {
										Enum []string `json:"enum"`
									} `json:"error"`
								} `json:"properties"`
							} `json:"allOf"`
						} `json:"schema"`
					} `json:"application/json"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"components"`
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Ref string `json:"$ref"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	t.Run("the ErrorCode enum is the table", func(t *testing.T) {
		got := slices.Sorted(slices.Values(doc.Components.Schemas["ErrorCode"].Enum))
		if want := slices.Sorted(maps.Keys(web.ErrorStatus)); !slices.Equal(got, want) {
			t.Fatalf("ErrorCode enum %v, the table %v", got, want)
		}
	})
	t.Run("each status answers its codes", func(t *testing.T) {
		for path, methods := range doc.Paths {
			for method, op := range methods {
				for status, r := range op.Responses {
					if r.Ref == "" {
						continue
					}
					n, _ := strconv.Atoi(status)
					var want []string
					for code, s := range web.ErrorStatus {
						if s == n {
							want = append(want, code)
						}
					}
					slices.Sort(want)
					shared := doc.Components.Responses[strings.TrimPrefix(r.Ref, "#/components/responses/")]
					var got []string
					if all := shared.Content.JSON.Schema.AllOf; len(all) == 2 {
						got = all[1].Properties.Error.Enum
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s %s %s: codes %v, the table has %v", method, path, status, got, want)
					}
				}
			}
		}
	})
}

// errorConstants are the error codes declared in models and web: the string
// constants named ECode… and code…, read from the source.
func errorConstants(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, glob := range []string{"../models/*.go", "*.go"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				g, ok := n.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					return true
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						isCode := strings.HasPrefix(id.Name, "ECode") || (strings.HasPrefix(id.Name, "code") && len(id.Name) > 4 && id.Name[4] >= 'A' && id.Name[4] <= 'Z')
						if !isCode || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							out = append(out, s)
						}
					}
				}
				return false
			})
		}
	}
	return out
}
